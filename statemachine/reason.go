package statemachine

import "fmt"

// Reason says why a job is PAUSED or DISABLED: a Kind that code decides by,
// and a Note that people read. Nothing compares Notes.
type Reason struct {
	Kind ReasonKind
	// Note is the pauser's words for ReasonPaused, and the details of the
	// others (how many failures, which error); it may be empty.
	Note string
}

// ReasonKind is the cause of a pause or a disable.
type ReasonKind string

// The kinds of reason.
const (
	// ReasonPaused: someone paused the job; Note is why.
	ReasonPaused ReasonKind = "paused"
	// ReasonRemovedFromConfig: the job left its project's config.
	ReasonRemovedFromConfig ReasonKind = "removed_from_config"
	// ReasonDisabledInConfig: its config says `disabled: true`.
	ReasonDisabledInConfig ReasonKind = "disabled_in_config"
	// ReasonAutoDisabled: it failed Policy.AutoDisableAfter times in a row.
	ReasonAutoDisabled ReasonKind = "auto_disabled"
)

// FromConfig reports whether the job's config put it in this state, so a
// config that lists the job enabled again brings it back. A job disabled
// for any other reason stays so until its definition changes.
func (r Reason) FromConfig() bool {
	return r.Kind == ReasonRemovedFromConfig || r.Kind == ReasonDisabledInConfig
}

// String is the reason in words, as the API and the console show it.
func (r Reason) String() string {
	var s string
	switch r.Kind {
	case "":
		return ""
	case ReasonPaused:
		return r.Note
	case ReasonRemovedFromConfig:
		s = "removed from config"
	case ReasonDisabledInConfig:
		s = "disabled in config"
	case ReasonAutoDisabled:
		// Note says after how many failures: "after 3 failed invocations
		// in a row".
		return "auto-disabled " + r.Note
	default:
		s = string(r.Kind)
	}
	if r.Note != "" {
		s = fmt.Sprintf("%s: %s", s, r.Note)
	}
	return s
}
