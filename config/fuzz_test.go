package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// passwordKeyIn reports whether any map key at any depth of the YAML
// document (as the JSON it converts to) is a password key.
func passwordKeyIn(v any) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if IsPasswordKey(k) {
				return k, true
			}
			if k, ok := passwordKeyIn(e); ok {
				return k, true
			}
		}
	case []any:
		for _, e := range v {
			if k, ok := passwordKeyIn(e); ok {
				return k, true
			}
		}
	}
	return "", false
}

// normal makes an empty url list and no url the same (both set none).
func normal(f *File) File {
	g := File{CurrentContext: f.CurrentContext}
	for _, c := range f.Contexts {
		if len(c.URL) == 0 {
			c.URL = nil
		}
		g.Contexts = append(g.Contexts, c)
	}
	return g
}

// FuzzParse: any bytes are read without a panic; a refusal is one line
// naming the file (and a line of it, when given, that exists); a password
// key anywhere is refused; a file that is accepted writes back (as Save
// writes it) and reads again to the same contexts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"current-context: prod\ncontexts:\n- name: prod\n  url: [ldap://a:389, ldap://b:389]\n  base: dc=example,dc=com\n  bind-dn: cn=admin,dc=example,dc=com\n  starttls: true\n  ca-file: /etc/ca.pem\n  timeout: 5s\n- name: lab\n  url: ldap://lab:389\n",
		"contexts:\n- name: a\n  password: x\n",
		"contexts:\n- name: a\n  url: ldap://x\n  bindPassword: x\n",
		"password: x\n",
		"contexts:\n- name: a\n  timeout: 5\n",
		"contexts:\n- name: a\n- name: b\n- name: a\n",
		"contexts:\n- name: a\n  url: [x\n",
		"contexts:\n- name: a\n  base: x\n  base: y\n",
		"{\"contexts\": [{\"name\": \"a\", \"url\": null, \"starttls\": false}]}",
		"",
	} {
		f.Add([]byte(s))
	}
	const path = "/home/me/.config/cpactl/config.yaml"
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parse(path, raw)
		if err != nil {
			ce, ok := err.(*Error)
			if !ok {
				t.Fatalf("err %T %v, want an *Error", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config file "+path) || strings.Contains(msg, "\n") {
				t.Fatalf("err %q: want one line naming the file", msg)
			}
			if ce.Line < 0 || ce.Line > lineCount(raw) {
				t.Fatalf("err %q: line %d, the file has %d lines", msg, ce.Line, lineCount(raw))
			}
			return
		}
		if j, err := yaml.YAMLToJSON(raw); err == nil {
			var v any
			if json.Unmarshal(j, &v) == nil {
				if k, ok := passwordKeyIn(v); ok {
					t.Fatalf("accepted a file with the password key %q", k)
				}
			}
		}
		b, err := yaml.Marshal(got)
		if err != nil {
			t.Fatalf("accepted %+v, which does not marshal: %v", got, err)
		}
		back, err := parse(path, b)
		if err != nil {
			t.Fatalf("accepted %+v, wrote\n%s\nwhich reads back as: %v", got, b, err)
		}
		if g, w := normal(back), normal(got); !reflect.DeepEqual(g, w) {
			t.Fatalf("accepted %+v, wrote\n%s\nwhich reads back as %+v", w, b, g)
		}
	})
}
