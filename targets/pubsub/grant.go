package pubsub

import (
	"encoding/json"
	"fmt"
	"strings"
)

// TopicGrant lets one project's jobs publish to a topic, or to every topic
// whose full name starts with a prefix. A server's grants are its operator's
// (--pubsub-topics): its credentials may reach other teams' topics, and a
// project may publish only to those it was granted.
type TopicGrant struct {
	// Project is the Sundial project the grant is for.
	Project string
	// Topic is a topic's full name, or with Prefix the start of one.
	Topic string
	// Prefix says Topic was written with a trailing "*".
	Prefix bool
}

// ParseTopicGrant reads a --pubsub-topics entry, PROJECT=TOPIC: TOPIC is a
// topic's full name, projects/<project>/topics/<topic>, or one with a
// trailing "*" matching every topic that starts with what precedes it
// (projects/p/topics/billing-*, projects/p/topics/*). A pattern must name
// its Pub/Sub project whole, so no grant reaches into projects the operator
// did not write. ParseTopicGrant does not judge PROJECT beyond its being
// there: what a Sundial project id may be is the caller's to check.
func ParseTopicGrant(s string) (TopicGrant, error) {
	project, topic, ok := strings.Cut(s, "=")
	project, topic = strings.TrimSpace(project), strings.TrimSpace(topic)
	if !ok || project == "" || topic == "" {
		return TopicGrant{}, fmt.Errorf("%q: want PROJECT=TOPIC, e.g. billing=projects/acme/topics/invoices", s)
	}
	g := TopicGrant{Project: project, Topic: topic}
	if rest, ok := strings.CutSuffix(topic, "*"); ok {
		g.Topic, g.Prefix = rest, true
		// The pattern must hold the whole Pub/Sub project and "topics/";
		// a topic named by it and a stand-in end checks the rest.
		parts := strings.Split(rest, "/")
		if len(parts) != 4 || parts[0] != "projects" || parts[2] != "topics" || strings.Contains(rest, "*") || checkTopic(rest+"xxx") != nil {
			return TopicGrant{}, fmt.Errorf("%q: a pattern is projects/<project>/topics/, the start of a topic id, then one trailing *", s)
		}
		return g, nil
	}
	if err := checkTopic(topic); err != nil {
		return TopicGrant{}, fmt.Errorf("%q: %v", s, err)
	}
	return g, nil
}

// allows says whether the grant lets project publish to topic.
func (g TopicGrant) allows(project, topic string) bool {
	if g.Project != project {
		return false
	}
	if g.Prefix {
		return strings.HasPrefix(topic, g.Topic)
	}
	return topic == g.Topic
}

// CheckFor implements target.ProjectChecker: project's jobs may publish
// only to the topics the operator granted it.
func (t *Target) CheckFor(project string, spec json.RawMessage) (string, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return "", err
	}
	if err := t.mayPublish(project, s.Topic); err != nil {
		return "topic", err
	}
	return "", nil
}

// mayPublish returns nil if project's jobs may publish to topic, or an
// error saying they may not.
func (t *Target) mayPublish(project, topic string) error {
	if t.anyTopic {
		return nil
	}
	for _, g := range t.grants {
		if g.allows(project, topic) {
			return nil
		}
	}
	return fmt.Errorf("project %s may not publish to %s (--pubsub-topics)", project, topic)
}
