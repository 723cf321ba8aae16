package canned

// Cards of the canned agent: where a gateway reads the backend's dialect
// and skills from at start. The URLs are placeholders; a gateway publishes
// its own.
const (
	cardV03 = `{"protocolVersion":"0.3.0","name":"Canned benchmark agent","description":"Answers every call at once with a canned reply.",` +
		`"url":"http://backend.invalid/v03/","preferredTransport":"JSONRPC","version":"1.0.0",` +
		`"capabilities":{"streaming":true,"pushNotifications":false},` +
		`"defaultInputModes":["text/plain","application/json"],"defaultOutputModes":["text/plain","application/json"],` +
		`"skills":[{"id":"summarize","name":"Summarise","description":"Summarises a report.","tags":["summary"]}]}`

	cardV10 = `{"name":"Canned benchmark agent","description":"Answers every call at once with a canned reply.",` +
		`"supportedInterfaces":[{"url":"http://backend.invalid/v10/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"version":"1.0.0","capabilities":{"streaming":true,"pushNotifications":false,"extendedAgentCard":false},` +
		`"defaultInputModes":["text/plain","application/json"],"defaultOutputModes":["text/plain","application/json"],` +
		`"skills":[{"id":"summarize","name":"Summarise","description":"Summarises a report.","tags":["summary"]}]}`
)

// card returns the card served at path, or nil.
func card(path string) []byte {
	switch path {
	case "/v03/.well-known/agent-card.json", "/v03/.well-known/agent.json":
		return []byte(cardV03)
	case "/v10/.well-known/agent-card.json":
		return []byte(cardV10)
	}
	return nil
}
