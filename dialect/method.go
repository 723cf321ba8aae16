package dialect

// method is one row of a dialect's method table.
type method struct {
	Op   Op
	Name string
}

// Method tables are ordered slices, not maps, so lookups and inverses are
// deterministic. Every Op appears at most once per dialect.
var (
	methodsV03 = []method{
		{SendMessage, "message/send"},
		{SendStreamingMessage, "message/stream"},
		{GetTask, "tasks/get"},
		{CancelTask, "tasks/cancel"},
		{SubscribeToTask, "tasks/resubscribe"},
		{CreatePushConfig, "tasks/pushNotificationConfig/set"},
		{GetPushConfig, "tasks/pushNotificationConfig/get"},
		{ListPushConfigs, "tasks/pushNotificationConfig/list"},
		{DeletePushConfig, "tasks/pushNotificationConfig/delete"},
		// 0.3 only; a 0.2.5 backend serves the extended card over plain HTTP GET.
		{GetExtendedCard, "agent/getAuthenticatedExtendedCard"},
	}
	methodsV10 = []method{
		{SendMessage, "SendMessage"},
		{SendStreamingMessage, "SendStreamingMessage"},
		{GetTask, "GetTask"},
		{ListTasks, "ListTasks"},
		{CancelTask, "CancelTask"},
		{SubscribeToTask, "SubscribeToTask"},
		{CreatePushConfig, "CreateTaskPushNotificationConfig"},
		{GetPushConfig, "GetTaskPushNotificationConfig"},
		{ListPushConfigs, "ListTaskPushNotificationConfigs"},
		{DeletePushConfig, "DeleteTaskPushNotificationConfig"},
		{GetExtendedCard, "GetExtendedAgentCard"},
	}
)

func methods(d ID) []method {
	if d == V10 {
		return methodsV10
	}
	return methodsV03
}

// Lookup finds the dialect and operation of a JSON-RPC method name. The name
// alone decides: slash-style names are 0.x, PascalCase names are 1.0.
func Lookup(name string) (ID, Op, bool) {
	for _, m := range methodsV10 {
		if m.Name == name {
			return V10, m.Op, true
		}
	}
	for _, m := range methodsV03 {
		if m.Name == name {
			return V03, m.Op, true
		}
	}
	return 0, OpUnknown, false
}

// MethodName returns how dialect d spells op, and false when d has no such
// method (ListTasks in 0.x).
func MethodName(d ID, op Op) (string, bool) {
	for _, m := range methods(d) {
		if m.Op == op {
			return m.Name, true
		}
	}
	return "", false
}

// Retired lists method names of A2A 0.1 and non-standard extensions that the
// gateway names in its error message instead of a bare "method not found".
var Retired = []string{"tasks/send", "tasks/sendSubscribe", "tasks/pushNotification/set", "tasks/pushNotification/get", "tasks/list"}
