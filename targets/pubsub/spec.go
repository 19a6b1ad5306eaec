package pubsub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Spec is the pubsub target's part of a job definition.
type Spec struct {
	// Topic is the full name of the topic: "projects/<project>/topics/<topic>".
	Topic string `json:"topic"`
	// Data is the message's payload.
	Data string `json:"data,omitempty"`
	// Attributes are added to the message. Names starting with "Sundial-"
	// are set by the target; names starting with "goog" are Pub/Sub's.
	Attributes map[string]string `json:"attributes,omitempty"`
	// OrderingKey orders the messages that carry it, for subscriptions that
	// ask for ordering.
	OrderingKey string `json:"ordering_key,omitempty"`
}

// Pub/Sub's limits (https://cloud.google.com/pubsub/quotas#resource_limits),
// checked here so that a spec over them is refused at load, not at 3 a.m.
const (
	maxAttributes     = 100 - 4 // the Sundial-* ones
	maxAttributeName  = 256
	maxAttributeValue = 1024
	maxOrderingKey    = 1024
	maxData           = 10 << 20
)

// parseSpec decodes a spec strictly and checks every field, so Check and
// Launch refuse the same specs.
func parseSpec(raw json.RawMessage) (Spec, error) {
	var spec Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("pubsub: bad spec: %v", err)
	}
	if dec.More() {
		return spec, fmt.Errorf("pubsub: bad spec: more than one JSON value")
	}
	if err := checkTopic(spec.Topic); err != nil {
		return spec, err
	}
	if len(spec.Data) > maxData {
		return spec, fmt.Errorf("pubsub: data is %d bytes: want at most %d", len(spec.Data), maxData)
	}
	if len(spec.Attributes) > maxAttributes {
		return spec, fmt.Errorf("pubsub: attributes: %d of them: want at most %d (Sundial sets 4 more)", len(spec.Attributes), maxAttributes)
	}
	for name, value := range spec.Attributes {
		switch {
		case name == "":
			return spec, fmt.Errorf("pubsub: attributes: an attribute name is empty")
		case len(name) > maxAttributeName:
			return spec, fmt.Errorf("pubsub: attribute %.40q...: the name is longer than %d bytes", name, maxAttributeName)
		case strings.HasPrefix(strings.ToLower(name), "sundial-"):
			return spec, fmt.Errorf("pubsub: attribute %q: the Sundial-* attributes are set by Sundial", name)
		case strings.HasPrefix(strings.ToLower(name), "goog"):
			return spec, fmt.Errorf("pubsub: attribute %q: names starting with goog are reserved by Pub/Sub", name)
		case !utf8.ValidString(name) || !utf8.ValidString(value):
			return spec, fmt.Errorf("pubsub: attribute %q: not UTF-8", name)
		case len(value) > maxAttributeValue:
			return spec, fmt.Errorf("pubsub: attribute %q: the value is longer than %d bytes", name, maxAttributeValue)
		}
	}
	if len(spec.OrderingKey) > maxOrderingKey {
		return spec, fmt.Errorf("pubsub: ordering_key is longer than %d bytes", maxOrderingKey)
	}
	return spec, nil
}

// checkTopic checks the form of a topic's full name, by the resource name
// rules (https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names):
// whether the topic exists is the server's to say.
func checkTopic(s string) error {
	if s == "" {
		return fmt.Errorf("pubsub: topic is missing")
	}
	parts := strings.Split(s, "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[2] != "topics" {
		return fmt.Errorf("pubsub: bad topic %q: want projects/<project>/topics/<topic>", s)
	}
	project, id := parts[1], parts[3]
	if project == "" || strings.Trim(project, "abcdefghijklmnopqrstuvwxyz0123456789-.:") != "" {
		return fmt.Errorf("pubsub: bad topic %q: bad project id %q", s, project)
	}
	switch {
	case len(id) < 3 || len(id) > 255:
		return fmt.Errorf("pubsub: bad topic %q: the topic id must be 3 to 255 characters", s)
	case !('a' <= id[0] && id[0] <= 'z' || 'A' <= id[0] && id[0] <= 'Z'):
		return fmt.Errorf("pubsub: bad topic %q: the topic id must start with a letter", s)
	case strings.HasPrefix(strings.ToLower(id), "goog"):
		return fmt.Errorf("pubsub: bad topic %q: topic ids starting with goog are reserved", s)
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~+%", c) >= 0) {
			return fmt.Errorf("pubsub: bad topic %q: the topic id holds %q: want letters, digits and - _ . ~ + %%", s, c)
		}
	}
	return nil
}
