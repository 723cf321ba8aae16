module github.com/a2agate/gateway/interop/harness

go 1.26
