package horizontest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
)

// rawClient is the few calls the fixture tests make, with net/http only.
type rawClient struct{ hc *http.Client }

func testClient(t *testing.T, f *Federation) *rawClient {
	pemBytes, err := os.ReadFile(f.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in the CA file")
	}
	return &rawClient{hc: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
}

type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	raw     []byte
}

func (c *rawClient) login(t *testing.T, base string) tokens {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"domain": Domain, "username": User, "password": Password})
	resp, err := c.hc.Post(base+"/rest/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, b)
	}
	var tk tokens
	if err := json.Unmarshal(b, &tk); err != nil {
		t.Fatal(err)
	}
	tk.raw = b
	return tk
}

func (c *rawClient) get(t *testing.T, base, access, path, query string) []byte {
	t.Helper()
	u := base + "/rest" + path
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

func (c *rawClient) write(t *testing.T, base, access, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/rest"+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+access)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
