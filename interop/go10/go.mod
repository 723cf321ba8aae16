module github.com/a2agate/gateway/interop/go10

go 1.26

require (
	github.com/a2aproject/a2a-go/v2 v2.3.1
	github.com/google/uuid v1.6.0
)

require (
	golang.org/x/mod v0.33.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
)
