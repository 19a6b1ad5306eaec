package check

import (
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// imageUser is the Containerfile's USER: the image's files are its.
const imageUser = 65532

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

func TestTheDatabaseURLComesFromTheSecret(t *testing.T) {
	m := load(t)
	c := container(t, m)
	args := serveArgs(t, c.Args)
	if args["backend"] != "postgres" {
		t.Errorf("--backend=%s, want postgres", args["backend"])
	}
	for _, flag := range []string{"database-url", "database-listen-url"} {
		if _, ok := args[flag]; ok {
			t.Errorf("--%s in the args puts a password in the pod's spec: give it in the environment from the Secret", flag)
		}
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SUNDIAL_DATABASE_URL" })
	if i < 0 {
		t.Fatal("no SUNDIAL_DATABASE_URL in the container's environment")
	}
	if e := c.Env[i]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Errorf("SUNDIAL_DATABASE_URL is not from a Secret: %+v", e)
	}
}

// Every Secret and ConfigMap the pod reads is one the manifests give (the
// Secret: the example), with the keys the pod reads: a missing one keeps
// the pod from starting.
func TestEveryReferenceResolves(t *testing.T) {
	m := load(t)
	c := container(t, m)
	secretKey := func(what string, name, key string, optional *bool) {
		if name != m.secret.Name {
			t.Errorf("%s names Secret %q; the example is %q", what, name, m.secret.Name)
		} else if _, ok := secretData(m.secret)[key]; key != "" && !ok {
			t.Errorf("%s reads key %q, which the example Secret lacks", what, key)
		}
		if optional != nil && *optional {
			t.Errorf("%s is optional: a pod without it would start and fail", what)
		}
	}
	configKey := func(what string, name, key string) {
		cm := m.configMaps[name]
		if cm == nil {
			t.Errorf("%s names ConfigMap %q, which the manifests do not hold", what, name)
		} else if _, ok := cm.Data[key]; key != "" && !ok {
			t.Errorf("%s reads key %q, which ConfigMap %s lacks", what, key, name)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			secretKey("env "+e.Name, r.Name, r.Key, r.Optional)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			r := e.ValueFrom.ConfigMapKeyRef
			configKey("env "+e.Name, r.Name, r.Key)
		}
	}
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			secretKey("envFrom", e.SecretRef.Name, "", e.SecretRef.Optional)
		}
		if e.ConfigMapRef != nil {
			configKey("envFrom", e.ConfigMapRef.Name, "")
		}
	}
	for _, v := range m.deployment.Spec.Template.Spec.Volumes {
		volumeFiles(t, m, v.VolumeSource)
	}
	if len(secretData(m.secret)) == 0 {
		t.Error("the example Secret has no keys")
	}
}

// secretData is a Secret's keys and values, written as data or stringData.
func secretData(s *corev1.Secret) map[string]string {
	d := map[string]string{}
	for k, v := range s.Data {
		d[k] = string(v)
	}
	for k, v := range s.StringData {
		d[k] = v
	}
	return d
}

// volumeFiles are the files a volume of ConfigMaps and Secrets holds, by
// name, with their content (the example Secret's for a Secret); it fails
// t on a reference the manifests do not resolve.
func volumeFiles(t *testing.T, m *manifests, v corev1.VolumeSource) map[string]string {
	t.Helper()
	files := map[string]string{}
	add := func(what, name string, data map[string]string, items []corev1.KeyToPath) {
		if data == nil {
			t.Errorf("the volume's %s %q is not in the manifests", what, name)
			return
		}
		if items == nil {
			for k, v := range data {
				files[k] = v
			}
			return
		}
		for _, it := range items {
			v, ok := data[it.Key]
			if !ok {
				t.Errorf("the volume's %s %q lacks key %q", what, name, it.Key)
			}
			files[it.Path] = v
		}
	}
	configMap := func(name string) map[string]string {
		if cm := m.configMaps[name]; cm != nil {
			return cm.Data
		}
		return nil
	}
	secret := func(name string) map[string]string {
		if name == m.secret.Name {
			return secretData(m.secret)
		}
		return nil
	}
	switch {
	case v.ConfigMap != nil:
		add("ConfigMap", v.ConfigMap.Name, configMap(v.ConfigMap.Name), v.ConfigMap.Items)
	case v.Secret != nil:
		add("Secret", v.Secret.SecretName, secret(v.Secret.SecretName), v.Secret.Items)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				add("ConfigMap", s.ConfigMap.Name, configMap(s.ConfigMap.Name), s.ConfigMap.Items)
			case s.Secret != nil:
				add("Secret", s.Secret.Name, secret(s.Secret.Name), s.Secret.Items)
			default:
				t.Errorf("a projected source these tests do not know: %+v", s)
			}
		}
	default:
		t.Errorf("a volume these tests do not know: %+v", v)
	}
	return files
}

// mounted are the files the container sees, by path.
func mounted(t *testing.T, m *manifests, c *corev1.Container) map[string]string {
	t.Helper()
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range m.deployment.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	files := map[string]string{}
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			t.Fatalf("mount %s names no volume %q", vm.MountPath, vm.Name)
		}
		if !vm.ReadOnly {
			t.Errorf("%s is mounted writable: the server writes nothing", vm.MountPath)
		}
		for name, content := range volumeFiles(t, m, v) {
			files[path.Join(vm.MountPath, vm.SubPath, name)] = content
		}
	}
	return files
}

// Every file a flag names is one the mounts put there.
func TestEveryFileFlagNamesAMountedFile(t *testing.T) {
	m := load(t)
	c := container(t, m)
	files := mounted(t, m, c)
	n := 0
	for flag, value := range serveArgs(t, c.Args) {
		if !strings.HasSuffix(flag, "-file") {
			continue
		}
		n++
		if _, ok := files[value]; !ok {
			t.Errorf("--%s=%s is not a mounted file; the mounts give %v", flag, value, keys(files))
		}
	}
	if n == 0 {
		t.Error("no flag names a file: sign-in needs --static-tokens-file and --cookie-key-file")
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Sign-in is configured, and sessions outlive the instance that began
// them: without it a caller from the pod's loopback (kubectl
// port-forward, a mesh's sidecar) would be an administrator.
func TestSignInIsRequiredAndSharedByTheInstances(t *testing.T) {
	m := load(t)
	args := serveArgs(t, container(t, m).Args)
	if args["static-tokens-file"] == "" && args["oidc-issuer"] == "" && args["iap-audience"] == "" && args["id-token-audience"] == "" {
		t.Error("no sign-in is configured: the server would be in the local single-user mode")
	}
	if args["cookie-key-file"] == "" {
		t.Error("no --cookie-key-file: each instance would seal sessions with its own key, and the token sign-in is not offered")
	}
	if _, ok := args["insecure-dev-cookies"]; ok {
		t.Error("--insecure-dev-cookies is for http://localhost alone")
	}
}

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

func TestEveryServeArgumentIsAFlagOfServe(t *testing.T) {
	m := load(t)
	c := container(t, m)
	if len(c.Command) != 0 {
		t.Errorf("command %q replaces the image's entrypoint, the sundial binary", c.Command)
	}
	h := help(t)
	for flag := range serveArgs(t, c.Args) {
		if _, ok := h.usage[flag]; !ok {
			t.Errorf("--%s is not a flag of sundial serve", flag)
		}
	}
}

// goEnv are the variables of Go's runtime the container may set.
var goEnv = []string{"GOMEMLIMIT", "GOMAXPROCS", "GOGC", "GODEBUG"}

func TestEveryVariableIsOneServeReads(t *testing.T) {
	m := load(t)
	c := container(t, m)
	h := help(t)
	names := map[string]string{}
	for _, e := range c.Env {
		names[e.Name] = "env"
	}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil || m.configMaps[e.ConfigMapRef.Name] == nil {
			continue
		}
		if e.Prefix != "" {
			t.Errorf("envFrom %s has a prefix", e.ConfigMapRef.Name)
		}
		for k := range m.configMaps[e.ConfigMapRef.Name].Data {
			names[k] = "ConfigMap " + e.ConfigMapRef.Name
		}
	}
	for name, from := range names {
		if !h.env[name] && !slices.Contains(goEnv, name) {
			t.Errorf("%s (%s) is not a variable sundial serve -h names, nor Go's", name, from)
		}
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
