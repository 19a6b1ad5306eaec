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

	// The permanent errors: what the job needs in order to run cannot be
	// used, and no retry can change that. Note is the error.

	// ReasonStateUnreadable: its stored state could not be decoded; the
	// engine replaced it with a fresh DISABLED one.
	ReasonStateUnreadable ReasonKind = "state_unreadable"
	// ReasonDefinitionUnreadable: its stored definition could not be
	// decoded.
	ReasonDefinitionUnreadable ReasonKind = "definition_unreadable"
	// ReasonScheduleInvalid: its stored definition decodes, but its
	// schedule (time zone, DST policies) no longer parses: a zone removed
	// from the tz database, a grammar tightened.
	ReasonScheduleInvalid ReasonKind = "schedule_invalid"

	// ReasonUntyped: a DISABLED job stored before reasons were typed
	// (version 0 of the stored state), whose words were none a release
	// then wrote itself: only a caller of its engine.Disable could have
	// written them. Like an auto-disable it lasts until the definition
	// changes; calling it that, or the config's doing, would be a guess.
	// Note is the words.
	ReasonUntyped ReasonKind = "disabled"
)

// ReasonKinds lists every kind, for metrics and documentation.
var ReasonKinds = []ReasonKind{
	ReasonPaused, ReasonRemovedFromConfig, ReasonDisabledInConfig, ReasonAutoDisabled,
	ReasonStateUnreadable, ReasonDefinitionUnreadable, ReasonScheduleInvalid, ReasonUntyped,
}

// FromConfig reports whether the job's config put it in this state, so a
// config that lists the job enabled again brings it back. A job disabled
// for any other reason stays so until its definition changes.
func (r Reason) FromConfig() bool {
	return r.Kind == ReasonRemovedFromConfig || r.Kind == ReasonDisabledInConfig
}

// FromDefinition reports whether the job's stored definition put it in
// this state: it could not be decoded, or its schedule not parsed. A
// config that lists the job with a definition this release can run brings
// it back, even one equal to the stored one (the zone may be back in the
// tz database, or a newer release may read it).
func (r Reason) FromDefinition() bool {
	return r.Kind == ReasonDefinitionUnreadable || r.Kind == ReasonScheduleInvalid
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
	case ReasonStateUnreadable:
		s = "its stored state could not be read"
	case ReasonDefinitionUnreadable:
		s = "its stored definition could not be read"
	case ReasonScheduleInvalid:
		s = "its schedule is no longer valid"
	case ReasonUntyped:
		s = "disabled"
	default:
		s = string(r.Kind)
	}
	if r.Note != "" {
		s = fmt.Sprintf("%s: %s", s, r.Note)
	}
	return s
}
