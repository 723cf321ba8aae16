// Package dialect is the shared vocabulary of the gateway: the two A2A wire
// dialects, the operations they carry, and one data table per dialect for
// method names, enum spellings and error codes.
//
// Package dialect imports nothing from this module. It holds tables, never a
// model and never state: the byte-level translation lives in package normalize.
package dialect
