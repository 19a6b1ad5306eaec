package check

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// imageUser is the Containerfile's USER: the image's files are its.
const imageUser = 65532

// boolIs says p is set to want.
func boolIs(p *bool, want bool) bool { return p != nil && *p == want }

func TestTheContainerIsLockedDown(t *testing.T) {
	m := load(t)
	spec := m.deployment.Spec.Template.Spec
	c := container(t, m)
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the container has no securityContext")
	}
	// The container's setting, else the pod's.
	runAsNonRoot, runAsUser, seccomp := sc.RunAsNonRoot, sc.RunAsUser, sc.SeccompProfile
	if runAsNonRoot == nil {
		runAsNonRoot = pod.RunAsNonRoot
	}
	if runAsUser == nil {
		runAsUser = pod.RunAsUser
	}
	if seccomp == nil {
		seccomp = pod.SeccompProfile
	}
	if !boolIs(runAsNonRoot, true) {
		t.Error("runAsNonRoot is not true")
	}
	if runAsUser == nil || *runAsUser != imageUser {
		t.Errorf("runAsUser is %v, want the image's %d", runAsUser, imageUser)
	}
	if !boolIs(sc.ReadOnlyRootFilesystem, true) {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if !boolIs(sc.AllowPrivilegeEscalation, false) {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if boolIs(sc.Privileged, true) {
		t.Error("the container is privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities are %+v, want ALL dropped and none added", sc.Capabilities)
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the seccomp profile is %+v, want RuntimeDefault", seccomp)
	}
	if !boolIs(spec.AutomountServiceAccountToken, false) {
		t.Error("the pod mounts a service account token: Sundial never calls the Kubernetes API")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("the pod shares a namespace of the host")
	}
}

// Go collects harder as the heap nears GOMEMLIMIT, which must be below
// the limit at which the kernel kills the container.
func TestResourcesAreBoundedAndGoKnowsTheBound(t *testing.T) {
	m := load(t)
	c := container(t, m)
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request: the scheduler would not reserve it", r)
		}
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Fatal("no memory limit")
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
	if i < 0 {
		t.Fatal("no GOMEMLIMIT: Go would let the heap grow to twice what is live, past the limit")
	}
	// Go's units are resource's with a B: 400MiB is 400Mi.
	soft, err := resource.ParseQuantity(strings.TrimSuffix(c.Env[i].Value, "B"))
	if err != nil {
		t.Fatalf("GOMEMLIMIT=%s: %v", c.Env[i].Value, err)
	}
	if soft.Cmp(limit) >= 0 {
		t.Errorf("GOMEMLIMIT=%s is not below the memory limit %s", c.Env[i].Value, limit.String())
	}
}
