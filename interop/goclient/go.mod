module github.com/a2agate/gateway/interop/goclient

go 1.26

require (
	github.com/a2aproject/a2a-go v0.3.3
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250715232539-7130f93afb79
	google.golang.org/grpc v1.73.0
)

require (
	github.com/a2agate/gateway/interop/harness v0.0.0
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/net v0.41.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
	golang.org/x/text v0.26.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/protobuf v1.36.6 // indirect
)

replace github.com/a2agate/gateway/interop/harness => ../harness
