package cloudtasks

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// readableMax bounds the readable part of a task id. Ids may be 500
// characters long; a job id could be longer than that.
const readableMax = 200

// TaskID maps a task name (task.Task.Name) to a Cloud Tasks task id:
// letters, digits, hyphens and underscores, at most 500 characters. The id
// starts with a hash of the whole name, so two names never share an id even
// when their readable parts do ("a/b" and "a-b"), and ids spread evenly over
// Cloud Tasks' name space: it warns that sequential ids (a timestamp or a
// job id as prefix) slow down task creation. The readable rest is for
// people reading logs and the console.
func TaskID(name string) string {
	sum := sha256.Sum256([]byte(name))
	var b strings.Builder
	b.WriteString(hex.EncodeToString(sum[:16]))
	b.WriteByte('_')
	for _, r := range name {
		if b.Len() >= 32+1+readableMax {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
