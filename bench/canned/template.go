package canned

import "bytes"

// taskSlot marks where a template takes the task id.
const taskSlot = "\x00TASK\x00"

// template is a reply with holes for the task id, kept as the pieces
// between the holes so that filling it is a few appends.
type template [][]byte

func newTemplate(s string) template {
	return bytes.Split([]byte(s), []byte(taskSlot))
}

// appendTo writes the template with taskID in every hole.
func (t template) appendTo(dst, taskID []byte) []byte {
	for i, piece := range t {
		if i > 0 {
			dst = append(dst, taskID...)
		}
		dst = append(dst, piece...)
	}
	return dst
}

// size is the template's length with taskID filled in.
func (t template) size(taskID []byte) int {
	n := (len(t) - 1) * len(taskID)
	for _, piece := range t {
		n += len(piece)
	}
	return n
}
