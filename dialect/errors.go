package dialect

// ErrorKind is one canonical JSON-RPC error of A2A.
type ErrorKind uint8

const (
	ErrInternal ErrorKind = iota
	ErrParse
	ErrInvalidRequest
	ErrMethodNotFound
	ErrInvalidParams
	ErrTaskNotFound
	ErrTaskNotCancelable
	ErrPushNotSupported
	ErrUnsupportedOperation
	ErrContentTypeNotSupported
	ErrInvalidAgentResponse
	ErrExtendedCardNotConfigured
	ErrExtensionSupportRequired
	ErrVersionNotSupported
	ErrUnauthenticated
	errKindCount
)

// ErrorCode is one row of the error table.
type ErrorCode struct {
	Kind ErrorKind
	Code int
	// Reason is the 1.0 google.rpc.ErrorInfo reason, also the metric label.
	Reason string
	// Message is the default human message, used when the gateway itself
	// raises the error without a more specific one.
	Message string
}

// Domain is the ErrorInfo domain of A2A errors (1.0 §9.5).
const Domain = "a2a-protocol.org"

// ErrorInfoType is the ProtoJSON Any type of an ErrorInfo detail.
const ErrorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// ErrorCodes is the single error table shared by both dialects: A2A kept the
// codes when it renamed the errors. -32007..-32009 do not exist in 0.2.5, but
// 0.x clients accept any code in the implementation-defined range.
var ErrorCodes = []ErrorCode{
	{ErrInternal, -32603, "INTERNAL_ERROR", "Internal error"},
	{ErrParse, -32700, "PARSE_ERROR", "Invalid JSON payload"},
	{ErrInvalidRequest, -32600, "INVALID_REQUEST", "Request payload validation error"},
	{ErrMethodNotFound, -32601, "METHOD_NOT_FOUND", "Method not found"},
	{ErrInvalidParams, -32602, "INVALID_PARAMS", "Invalid parameters"},
	{ErrTaskNotFound, -32001, "TASK_NOT_FOUND", "Task not found"},
	{ErrTaskNotCancelable, -32002, "TASK_NOT_CANCELABLE", "Task cannot be canceled"},
	{ErrPushNotSupported, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported"},
	{ErrUnsupportedOperation, -32004, "UNSUPPORTED_OPERATION", "This operation is not supported"},
	{ErrContentTypeNotSupported, -32005, "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types"},
	{ErrInvalidAgentResponse, -32006, "INVALID_AGENT_RESPONSE", "Invalid agent response"},
	{ErrExtendedCardNotConfigured, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended agent card is not configured"},
	{ErrExtensionSupportRequired, -32008, "EXTENSION_SUPPORT_REQUIRED", "Extension support required"},
	{ErrVersionNotSupported, -32009, "VERSION_NOT_SUPPORTED", "Protocol version not supported"},
	// Not in the A2A spec: the a2a-go SDK's code for a missing or bad
	// credential, the only one any SDK defines.
	{ErrUnauthenticated, -31401, "UNAUTHENTICATED", "Unauthenticated"},
}

// Error returns the table row for kind.
func (k ErrorKind) Error() ErrorCode {
	for _, e := range ErrorCodes {
		if e.Kind == k {
			return e
		}
	}
	return ErrorCodes[0]
}

// String returns the kind's reason, safe as a metric label value.
func (k ErrorKind) String() string { return k.Error().Reason }

// ErrorByCode returns the row for a JSON-RPC error code.
func ErrorByCode(code int) (ErrorCode, bool) {
	for _, e := range ErrorCodes {
		if e.Code == code {
			return e, true
		}
	}
	return ErrorCode{}, false
}

// ErrorByReason returns the row for a google.rpc.ErrorInfo reason.
func ErrorByReason(reason string) (ErrorCode, bool) {
	for _, e := range ErrorCodes {
		if e.Reason == reason {
			return e, true
		}
	}
	return ErrorCode{}, false
}
