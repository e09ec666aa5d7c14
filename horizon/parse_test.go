package horizon

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseAPIError(t *testing.T) {
	for _, tc := range []struct{ body, key, msg string }{
		{`{"error_key":"common.not.found","error_message":"Resource not found"}`, "common.not.found", "Resource not found"},
		{`{"status":"TOO_MANY_REQUESTS","timestamp":1,"errors":[{"error_key":"common.api-throttle-limit.exceeded.error","error_message":"slow down"}]}`, "common.api-throttle-limit.exceeded.error", "slow down"},
		{`[{"error_key":"k","error_message":"m"}]`, "k", "m"},
		{`{"error_message":"two\nlines\t and  spaces"}`, "", "two lines and spaces"},
		{`<html>502 Bad Gateway</html>`, "", ""},
		{``, "", ""},
		{`{"error_message":"` + strings.Repeat("x", 500) + `"}`, "", strings.Repeat("x", maxMessage) + "…"},
	} {
		key, msg := parseAPIError([]byte(tc.body))
		if key != tc.key || msg != tc.msg {
			t.Errorf("%.40s: got %q %q, want %q %q", tc.body, key, msg, tc.key, tc.msg)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		v    string
		wait time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"86400", time.Minute, true},
		{"1e308", time.Minute, true},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
	} {
		wait, ok := parseRetryAfter(tc.v, time.Minute)
		if wait != tc.wait || ok != tc.ok {
			t.Errorf("%q: got %v %v, want %v %v", tc.v, wait, ok, tc.wait, tc.ok)
		}
	}
}

func TestPagingHeaders(t *testing.T) {
	for _, tc := range []struct {
		h     http.Header
		more  bool
		total int64
	}{
		{http.Header{"Has_more_records": {"true"}, "X-Total-Count": {"12"}}, true, 12},
		{http.Header{"Has_more_records": {""}}, true, -1},
		{http.Header{"Has_more_records": {"false"}}, false, -1},
		{http.Header{"X-Total-Count": {"-4"}}, false, -1},
		{http.Header{}, false, -1},
	} {
		if hasMore(tc.h) != tc.more || totalCount(tc.h) != tc.total {
			t.Errorf("%v: more %v total %d", tc.h, hasMore(tc.h), totalCount(tc.h))
		}
	}
}

func jwt(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".sig"
}

func TestJWTExpiry(t *testing.T) {
	for _, tc := range []struct {
		tok string
		exp int64
		ok  bool
	}{
		{jwt(`{"exp":1767225600}`), 1767225600, true},
		{jwt(`{"exp":1767225600.5}`), 1767225600, true},
		{jwt(`{"sub":"x"}`), 0, false},
		{jwt(`{"exp":"tomorrow"}`), 0, false},
		{jwt(`{"exp":-1}`), 0, false},
		{jwt(`{"exp":1e300}`), 0, false},
		{"opaque-token", 0, false},
		{"a.!!!.c", 0, false},
	} {
		exp, ok := jwtExpiry(tc.tok)
		if ok != tc.ok || (ok && exp.Unix() != tc.exp) {
			t.Errorf("%s: got %v %v", tc.tok, exp, ok)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"https://cs.example.com", "https://cs.example.com/rest"},
		{"https://cs.example.com/", "https://cs.example.com/rest"},
		{"https://cs.example.com:8443/rest/", "https://cs.example.com:8443/rest"},
		{"HTTPS://cs.example.com", "https://cs.example.com/rest"},
		{"http://cs.example.com", ""},
		{"cs.example.com", ""},
		{"https://user:pw@cs.example.com", ""},
		{"https://cs.example.com/admin", ""},
		{"https://cs.example.com?x=1", ""},
	} {
		got, err := BaseURL(tc.in)
		if got != tc.out || (tc.out == "") != (err != nil) {
			t.Errorf("%s: got %q, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct{ in, out string }{
		{"https://horizon-CS.xyz.local:8472", "https://horizon-CS.xyz.local/rest"},
		{"cs1.example.com:8472", "https://cs1.example.com/rest"},
		{"https://[2001:db8::1]:8472", "https://[2001:db8::1]/rest"},
		{"", ""},
		{"https://:8472", ""},
	} {
		got, err := podBaseURL(tc.in)
		if got != tc.out || (tc.out == "") != (err != nil) {
			t.Errorf("%s: got %q, %v", tc.in, got, err)
		}
	}
}

// TestDecodeTop: a list is read element by element; what is not one JSON
// array or object is refused.
func TestDecodeTop(t *testing.T) {
	for _, tc := range []struct {
		body string
		n    int
		ok   bool
	}{
		{`[]`, 0, true},
		{` [ {"a":1}, {"b":[2]} ] ` + "\n", 2, true},
		{`{"guid":"x"}`, 1, true},
		{`[{"a":1}] [`, 1, false},
		{`[{"a":1},]`, 1, false},
		{`"text"`, 0, false},
		{``, 0, false},
		{`[{"a":1}`, 1, false},
	} {
		n, err := decodeTop(bufio.NewReader(strings.NewReader(tc.body)), nil)
		if n != tc.n || (err == nil) != tc.ok {
			t.Errorf("%q: %d records, %v", tc.body, n, err)
		}
	}
}

func TestCAFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, maxCAFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{big, empty, filepath.Join(dir, "absent.pem")} {
		if _, err := NewClient(Config{CAFile: f}, Credentials{}); err == nil {
			t.Errorf("%s accepted", f)
		}
	}
	if _, err := NewClient(Config{PageSize: 1001}, Credentials{}); err == nil {
		t.Error("page size 1001 accepted")
	}
}

// TestTLSVerified: a server whose certificate no trusted CA signed is
// refused as such (no request sent in clear), unless verification is
// turned off.
func TestTLSVerified(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"a","refresh_token":"r"}`))
	}))
	defer srv.Close()
	c, err := NewClient(Config{Timeout: 5 * time.Second}, Credentials{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Login(context.Background(), srv.URL+"/rest")
	var ue *UnreachableError
	if !errors.As(err, &ue) || !ue.Certificate {
		t.Fatalf("got %v, want a certificate error", err)
	}
	c, err = NewClient(Config{Timeout: 5 * time.Second, InsecureSkipVerify: true}, Credentials{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Login(context.Background(), srv.URL+"/rest")
	if err != nil {
		t.Fatal(err)
	}
	if s.access != "a" || s.refresh != "r" {
		t.Errorf("tokens %q %q", s.access, s.refresh)
	}
}

// TestTimeout: a server that takes the connection and never answers is
// unreachable, not an authentication failure.
func TestTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stop }))
	defer srv.Close()
	defer close(stop)
	c, err := NewClient(Config{Timeout: 200 * time.Millisecond, InsecureSkipVerify: true}, Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Login(context.Background(), srv.URL+"/rest")
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Certificate {
		t.Fatalf("got %v, want unreachable", err)
	}
}

// TestRedact: a server that repeats the password in its error does not
// get it into cpactl's error.
func TestRedact(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Password string `json:"password"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error_key": "auth", "error_message": "bad password " + body.Password})
	}))
	defer srv.Close()
	c, err := NewClient(Config{Timeout: 5 * time.Second, InsecureSkipVerify: true}, Credentials{Password: "s3cret-pw"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Login(context.Background(), srv.URL+"/rest")
	var ae *AuthError
	if !errors.As(err, &ae) || strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "***") {
		t.Fatalf("got %v", err)
	}
}

func FuzzParseAPIError(f *testing.F) {
	f.Add([]byte(`{"error_key":"k","error_message":"m"}`))
	f.Add([]byte(`{"status":"TOO_MANY_REQUESTS","errors":[{"error_key":"k","error_message":"m"}]}`))
	f.Add([]byte(`[{"error_message":"x"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		key, msg := parseAPIError(b)
		for _, s := range []string{key, msg} {
			if strings.ContainsAny(s, "\n\r\t") || utf8.RuneCountInString(s) > maxMessage+1 {
				t.Fatalf("not one short line: %q", s)
			}
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "0", "1.5", "-1", "1e400", "NaN", "Inf", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		wait, ok := parseRetryAfter(s, time.Minute)
		if wait < 0 || wait > time.Minute || (!ok && wait != 0) {
			t.Fatalf("%q: %v %v", s, wait, ok)
		}
	})
}

func FuzzJWTExpiry(f *testing.F) {
	f.Add(jwt(`{"exp":1767225600}`))
	f.Add(jwt(`{"exp":1.5e9}`))
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, tok string) {
		exp, ok := jwtExpiry(tok)
		if ok && (exp.Unix() < 0 || exp.Year() > 5200) {
			t.Fatalf("%q: %v", tok, exp)
		}
	})
}

func FuzzDecodeTop(f *testing.F) {
	f.Add([]byte(`[{"id":"a"},{"id":"b"}]`))
	f.Add([]byte(`{"guid":"x","sites":[]}`))
	f.Add([]byte(`[1,2] x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		got, err := decodeTop(bufio.NewReader(strings.NewReader(string(b))), func(raw json.RawMessage) error {
			n++
			if !json.Valid(raw) {
				t.Fatalf("invalid element %q", raw)
			}
			return nil
		})
		if got != n {
			t.Fatalf("counted %d, handed out %d", got, n)
		}
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}
