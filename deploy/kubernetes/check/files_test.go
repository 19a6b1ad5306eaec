package check

import (
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

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
			// A subPath mounts that one file or directory of the volume.
			switch rest, under := strings.CutPrefix(name, vm.SubPath+"/"); {
			case vm.SubPath == "":
				files[path.Join(vm.MountPath, name)] = content
			case name == vm.SubPath:
				files[vm.MountPath] = content
			case under:
				files[path.Join(vm.MountPath, rest)] = content
			}
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
			t.Errorf("--%s=%s is not a mounted file; the mounts give %v", flag, value, slices.Sorted(maps.Keys(files)))
		}
	}
	if n == 0 {
		t.Error("no flag names a file: sign-in needs --static-tokens-file and --cookie-key-file")
	}
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
