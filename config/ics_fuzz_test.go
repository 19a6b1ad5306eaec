package config

import (
	"testing"
	"time"
)

// FuzzReadICS: whatever an .ics file holds, reading it ends with days or
// with errors that name the file, never a panic, and every range it
// yields starts no later than it ends.
func FuzzReadICS(f *testing.F) {
	f.Add("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261225\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261228\nDTEND;VALUE=DATE:20261231\nEND:VEVENT\nBEGIN:VEVENT\nDTSTART:20260101\nDURATION:P2W\nEND:VEVENT\nEND:VCALENDAR\n")
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261225T100000Z\nRRULE:FREQ=YEARLY\nEND:VEVENT\nEND:VCALENDAR\n")
	f.Add("BEGIN:VCALENDAR\nX-WR-CALNAME:a\n b\nBEGIN:VEVENT\nEND:VCALENDAR\n")
	f.Fuzz(func(t *testing.T, data string) {
		ranges, errs := readICS("h.ics", []byte(data))
		for _, e := range errs {
			if e.File != "h.ics" || e.Msg == "" {
				t.Fatalf("error %+v", e)
			}
		}
		for _, r := range ranges {
			first := time.Date(r.First.Year, r.First.Month, r.First.Day, 0, 0, 0, 0, time.UTC)
			if time.Date(r.Last.Year, r.Last.Month, r.Last.Day, 0, 0, 0, 0, time.UTC).Before(first) {
				t.Fatalf("range %s..%s ends before it starts", r.First, r.Last)
			}
		}
	})
}
