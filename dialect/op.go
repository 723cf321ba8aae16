package dialect

// Op is one A2A operation, independent of how a dialect spells it.
type Op uint8

const (
	OpUnknown Op = iota
	SendMessage
	SendStreamingMessage
	GetTask
	ListTasks
	CancelTask
	SubscribeToTask
	CreatePushConfig
	GetPushConfig
	ListPushConfigs
	DeletePushConfig
	GetExtendedCard
	opCount
)

// Ops lists every operation, in declaration order.
var Ops = func() []Op {
	ops := make([]Op, 0, opCount-1)
	for op := SendMessage; op < opCount; op++ {
		ops = append(ops, op)
	}
	return ops
}()

var opNames = [opCount]string{
	OpUnknown:            "unknown",
	SendMessage:          "send_message",
	SendStreamingMessage: "send_streaming_message",
	GetTask:              "get_task",
	ListTasks:            "list_tasks",
	CancelTask:           "cancel_task",
	SubscribeToTask:      "subscribe_to_task",
	CreatePushConfig:     "create_push_config",
	GetPushConfig:        "get_push_config",
	ListPushConfigs:      "list_push_configs",
	DeletePushConfig:     "delete_push_config",
	GetExtendedCard:      "get_extended_card",
}

// String returns a stable snake_case name, safe as a metric label value.
func (op Op) String() string {
	if op < opCount {
		return opNames[op]
	}
	return opNames[OpUnknown]
}

// Streaming reports whether op answers with an SSE stream.
func (op Op) Streaming() bool { return op == SendStreamingMessage || op == SubscribeToTask }

// AddressesTask reports whether op's params name an existing task.
func (op Op) AddressesTask() bool {
	switch op {
	case GetTask, CancelTask, SubscribeToTask, CreatePushConfig, GetPushConfig, ListPushConfigs, DeletePushConfig:
		return true
	}
	return false
}
