package check

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// dir holds the manifests; the module sits inside it.
const dir = ".."

// exampleSecret is the Secret shown with placeholders: its name does not
// end in .yaml, so that `kubectl apply -f deploy/kubernetes/` leaves it out.
const exampleSecret = "secret.yaml.example"

// decoder decodes as the API server does with strict field validation:
// an unknown or duplicated field, or a wrong case, is an error.
var decoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}()

// manifests are deploy/kubernetes's objects.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	configMaps map[string]*corev1.ConfigMap
	// secret is the example's: the keys a real one must have.
	secret *corev1.Secret
	// applied are the files `kubectl apply -f deploy/kubernetes/` takes.
	applied []string
}

// load decodes every manifest strictly, failing t on any error, and on a
// file that holds anything but the objects above.
func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// kubectl apply -f DIR takes these extensions, and no others.
		if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			m.applied = append(m.applied, e.Name())
		}
	}
	for _, name := range append(slices.Clone(m.applied), exampleSecret) {
		objs, err := decodeFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, obj := range objs {
			switch o := obj.(type) {
			case *appsv1.Deployment:
				m.deployment = once(t, name, m.deployment, o)
			case *corev1.Service:
				m.service = once(t, name, m.service, o)
			case *policyv1.PodDisruptionBudget:
				m.pdb = once(t, name, m.pdb, o)
			case *corev1.ConfigMap:
				if m.configMaps[o.Name] != nil {
					t.Fatalf("%s: a second ConfigMap %s", name, o.Name)
				}
				m.configMaps[o.Name] = o
			case *corev1.Secret:
				if name != exampleSecret {
					t.Fatalf("%s holds a Secret: kubectl apply -f on the directory would apply it; it belongs in %s", name, exampleSecret)
				}
				m.secret = once(t, name, m.secret, o)
			default:
				t.Fatalf("%s: a %T, which these tests do not check", name, obj)
			}
		}
	}
	if m.deployment == nil || m.service == nil || m.pdb == nil || m.secret == nil {
		t.Fatalf("want a Deployment, a Service, a PodDisruptionBudget and the example Secret; got %+v", m)
	}
	return m
}

// once is o, unless the manifests held one already.
func once[T any](t *testing.T, file string, had, o *T) *T {
	t.Helper()
	if had != nil {
		t.Fatalf("%s: a second %T", file, o)
	}
	return o
}

// decodeFile decodes each YAML document of a file strictly.
func decodeFile(path string) ([]runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if isEmpty(doc) {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("no object")
	}
	return objs, nil
}

// isEmpty says a document holds only comments and blank lines.
func isEmpty(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	m := load(t)
	if len(m.applied) == 0 {
		t.Fatal("no manifest to apply")
	}
	t.Logf("applied: %s; example: %s", strings.Join(m.applied, ", "), exampleSecret)
}

// The strict decoding above fails on what the API server would refuse or
// silently drop: this is the proof that it can.
func TestStrictDecodingRefusesWhatTheAPIDoesNotKnow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(dir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"an unknown field":          {"  replicas: 2\n", "  replicas: 2\n  replica: 2\n"},
		"a field in the wrong case": {"  replicas: 2\n", "  Replicas: 2\n"},
		"a duplicated field":        {"  replicas: 2\n", "  replicas: 2\n  replicas: 3\n"},
		"a value of the wrong type": {"  replicas: 2\n", "  replicas: two\n"},
	} {
		bad := bytes.Replace(data, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(bad, data) {
			t.Fatalf("%s: deployment.yaml has no %q to edit", name, edit[0])
		}
		if _, _, err := decoder.Decode(bad, nil, nil); err == nil {
			t.Errorf("%s was decoded without an error", name)
		}
	}
}
