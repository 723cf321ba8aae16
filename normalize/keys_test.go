package normalize

import "testing"

// TestKeySpecsFitMembers holds every spec table to maxMembers: collect
// indexes members by a table's positions, so a table left out of
// maxMembers's list could outgrow it.
func TestKeySpecsFitMembers(t *testing.T) {
	tables := map[string][]keySpec{
		"envelope": envelopeKeys[:], "reply": replyKeys[:], "update": updateKeys[:],
		"listTasks": listTasksKeys[:], "message": messageKeys[:], "part": partKeys[:],
		"file": fileKeys[:], "push": pushKeys[:], "auth": authKeys[:], "send": sendKeys[:],
		"configuration": configurationKeys[:], "taskID": taskIDKeys[:],
		"pushParams": pushParamsKeys[:], "pushList": pushListKeys[:],
		"taskList": taskListKeys[:], "task": taskKeys[:], "status": statusKeys[:],
		"artifact": artifactKeys[:], "extendedCard": extendedCardKeys[:],
	}
	for name, specs := range tables {
		if len(specs) > maxMembers {
			t.Errorf("%sKeys has %d members; members holds %d", name, len(specs), maxMembers)
		}
	}
}
