module github.com/a2agate/gateway/interop/harness

go 1.26

require github.com/google/uuid v1.6.0
