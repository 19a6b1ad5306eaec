package check

import (
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// container is the Deployment's one container, Sundial's.
func container(t *testing.T, m *manifests) *corev1.Container {
	t.Helper()
	spec := m.deployment.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("the pod has %d containers and %d init containers: want Sundial's alone", len(spec.Containers), len(spec.InitContainers))
	}
	return &spec.Containers[0]
}

// listenPort is the port --listen gives the server.
func listenPort(t *testing.T, c *corev1.Container) int32 {
	t.Helper()
	listen := serveArgs(t, c.Args)["listen"]
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("--listen=%s: %v", listen, err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("--listen=%s: the kubelet's probes and the Service reach the pod's address, not %s", listen, host)
	}
	p, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("--listen=%s: %v", listen, err)
	}
	return int32(p)
}

// resolve is the container port p names: a number, or a port's name.
func resolve(t *testing.T, c *corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, port := range c.Ports {
		if port.Name == p.StrVal {
			return port.ContainerPort
		}
	}
	t.Fatalf("no container port is named %q", p.StrVal)
	return 0
}

func TestProbesAskTheRealEndpointsOnTheServersPort(t *testing.T) {
	m := load(t)
	c := container(t, m)
	port := listenPort(t, c)
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == port }) {
		t.Errorf("no container port is --listen's %d: %+v", port, c.Ports)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"readiness", c.ReadinessProbe, "/readyz"},
		// Liveness must not depend on the database, or its outage would
		// restart every instance.
		{"liveness", c.LivenessProbe, "/healthz"},
		{"startup", c.StartupProbe, "/healthz"},
	} {
		if p.probe == nil {
			if p.name != "startup" {
				t.Errorf("no %s probe", p.name)
			}
			continue
		}
		get := p.probe.HTTPGet
		if get == nil {
			t.Errorf("the %s probe is not an HTTP GET", p.name)
			continue
		}
		if get.Path != p.path {
			t.Errorf("the %s probe asks %s, want %s", p.name, get.Path, p.path)
		}
		if got := resolve(t, c, get.Port); got != port {
			t.Errorf("the %s probe asks port %d, the server listens on %d", p.name, got, port)
		}
		if get.Scheme != "" && get.Scheme != corev1.URISchemeHTTP {
			t.Errorf("the %s probe speaks %s; the server speaks HTTP", p.name, get.Scheme)
		}
	}
}

// matches says sel picks pods labelled set.
func matches(t *testing.T, what string, sel *metav1.LabelSelector, set map[string]string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s's selector: %v", what, err)
	}
	if s.Empty() || !s.Matches(labels.Set(set)) {
		t.Errorf("%s's selector %q does not pick the Deployment's pods %v", what, s, set)
	}
}

func TestSelectorsPickTheDeploymentsPods(t *testing.T) {
	m := load(t)
	pods := m.deployment.Spec.Template.Labels
	matches(t, "the Deployment", m.deployment.Spec.Selector, pods)
	matches(t, "the PodDisruptionBudget", m.pdb.Spec.Selector, pods)
	matches(t, "the Service", &metav1.LabelSelector{MatchLabels: m.service.Spec.Selector}, pods)
	for _, c := range m.deployment.Spec.Template.Spec.TopologySpreadConstraints {
		matches(t, "the spread over "+c.TopologyKey, c.LabelSelector, pods)
	}
}

func TestTheServiceSendsPort80ToTheServer(t *testing.T) {
	m := load(t)
	c := container(t, m)
	svc := m.service.Spec
	if svc.Type != corev1.ServiceTypeClusterIP && svc.Type != "" {
		t.Errorf("the Service is a %s, want ClusterIP", svc.Type)
	}
	if len(svc.Ports) != 1 || svc.Ports[0].Port != 80 {
		t.Fatalf("the Service's ports are %+v, want 80 alone", svc.Ports)
	}
	if got, want := resolve(t, c, svc.Ports[0].TargetPort), listenPort(t, c); got != want {
		t.Errorf("the Service sends port 80 to %d; the server listens on %d", got, want)
	}
}

// The budget keeps one instance through a drain and never blocks one
// for good: with minAvailable at the replicas, no pod could be evicted.
func TestTheDisruptionBudgetKeepsOneOfSeveral(t *testing.T) {
	m := load(t)
	replicas := int32(1)
	if r := m.deployment.Spec.Replicas; r != nil {
		replicas = *r
	}
	if replicas < 2 {
		t.Errorf("%d replicas: one node's loss or drain leaves none", replicas)
	}
	min := m.pdb.Spec.MinAvailable
	if min == nil || min.Type != intstr.Int || min.IntVal != 1 {
		t.Errorf("minAvailable is %v, want 1", min)
	}
	if min != nil && min.Type == intstr.Int && min.IntVal >= replicas {
		t.Errorf("minAvailable %d of %d replicas: no pod could ever be evicted", min.IntVal, replicas)
	}
}

// Kubernetes kills the container terminationGracePeriodSeconds after it
// begins to stop it, preStop included: the server must have had its
// --stop-grace by then, or running invocations are cut short.
func TestTerminationGraceExceedsTheStopGrace(t *testing.T) {
	m := load(t)
	c := container(t, m)
	value, ok := serveArgs(t, c.Args)["stop-grace"]
	if !ok {
		value = help(t).defaultOf(t, "stop-grace")
	}
	stopGrace, err := time.ParseDuration(value)
	if err != nil {
		t.Fatalf("--stop-grace=%s: %v", value, err)
	}
	var preStop time.Duration
	if l := c.Lifecycle; l != nil && l.PreStop != nil {
		if l.PreStop.Exec != nil {
			t.Errorf("preStop runs %q: the image holds no program but sundial", l.PreStop.Exec.Command)
		}
		if l.PreStop.Sleep != nil {
			preStop = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
		}
	}
	gp := m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds
	if gp == nil {
		t.Fatal("no terminationGracePeriodSeconds: Kubernetes' default, 30 s, is no more than the stop grace")
	}
	if grace := time.Duration(*gp) * time.Second; grace <= preStop+stopGrace {
		t.Errorf("terminationGracePeriodSeconds %v is not above the preStop sleep %v plus --stop-grace %v", grace, preStop, stopGrace)
	}
}
