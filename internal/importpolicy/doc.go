// Package importpolicy holds the module's import policy as a test, in the
// manner of go/build's deps_test.go: the packages form a one-way graph,
// cmd/gateway -> proxy -> {normalize, auth, store}, normalize -> dialect,
// and dialect, auth and store import nothing from the module.
package importpolicy
