package forecast

import (
	"strconv"
	"strings"
)

// spreadMacros are the macros written as cron with their fixed minute
// hashed.
var spreadMacros = map[string]string{
	"@yearly":   "H 0 1 1 *",
	"@annually": "H 0 1 1 *",
	"@monthly":  "H 0 1 * *",
	"@weekly":   "H 0 * * 0",
	"@daily":    "H 0 * * *",
	"@midnight": "H 0 * * *",
	"@hourly":   "H * * * *",
}

// Spreading returns a cron expression like expr that spreads the jobs
// written with it over time by hashing (H) what it fixes: a fixed minute
// becomes H, so "0 0 * * *" fires once in the hour after midnight rather
// than at it; an expression firing every minute, or on a few, gets a
// hashed second ("H */5 * * * *"); a fixed second becomes H. It returns
// "" when it has nothing to suggest: an interval, a schedule that is
// triggered or already hashes where it could, or that fires every second.
func Spreading(expr string) string {
	text := strings.TrimSpace(expr)
	prefix := ""
	if strings.HasPrefix(text, "CRON_TZ=") || strings.HasPrefix(text, "TZ=") {
		zone, rest, _ := strings.Cut(text, " ")
		prefix, text = zone+" ", strings.TrimSpace(rest)
	}
	if m, ok := spreadMacros[strings.ToLower(text)]; ok {
		return prefix + m
	}
	words := strings.Fields(text)
	switch len(words) {
	case 5:
		switch {
		case strings.Contains(words[0], "H"):
			return ""
		case isNumber(words[0]):
			words[0] = "H"
		default:
			words = append([]string{"H"}, words...)
		}
	case 6, 7:
		if !isNumber(words[0]) {
			return ""
		}
		words[0] = "H"
	default:
		return ""
	}
	return prefix + strings.Join(words, " ")
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
