package sshhost

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in         string
		user, host string
		port       int
		err        string
	}{
		{in: "lab1", host: "lab1"},
		{in: "vagrant@lab1", user: "vagrant", host: "lab1"},
		{in: "root@10.0.0.1:2222", user: "root", host: "10.0.0.1", port: 2222},
		{in: "[fe80::1]:22", host: "fe80::1", port: 22},
		{in: "fe80::1", host: "fe80::1"},
		{in: "@lab1", err: "empty user"},
		{in: "lab1:0", err: "not a number in 1..65535"},
		{in: "lab1:ssh", err: "not a number in 1..65535"},
		{in: "root@", err: "no host name"},
	} {
		u, h, p, err := ParseTarget(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "[user@]host[:port]") {
				t.Errorf("%q: err %v, want %q and the accepted form", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || u != tc.user || h != tc.host || p != tc.port {
			t.Errorf("%q = %q %q %d %v, want %q %q %d", tc.in, u, h, p, err, tc.user, tc.host, tc.port)
		}
	}
}

// The file `vagrant ssh-config` writes, and what a run takes from it.
func TestResolveVagrantConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ssh-config")
	os.WriteFile(p, []byte(`Host lab1
  HostName 192.168.121.10
  User vagrant
  Port 22
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  PasswordAuthentication no
  IdentityFile "/home/u/lab/.vagrant/machines/lab1/libvirt/private_key"
  IdentitiesOnly yes
  LogLevel FATAL

Host lab2
  HostName 192.168.121.11
  User vagrant
  Port 2200
  UserKnownHostsFile /tmp/a /tmp/b
  StrictHostKeyChecking accept-new
  ConnectTimeout 3

Host *
  User nobody
`), 0o600)
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Hosts(); !reflect.DeepEqual(got, []string{"lab1", "lab2"}) {
		t.Errorf("Hosts = %v, want lab1 lab2 (not the pattern)", got)
	}
	t1, err := c.Resolve("lab1")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Name: "lab1", Host: "192.168.121.10", Port: 22, User: "vagrant",
		IdentityFiles: []string{"/home/u/lab/.vagrant/machines/lab1/libvirt/private_key"}, IdentitiesOnly: true,
		KnownHosts: []string{"/dev/null"}, Strict: "no", ConnectTimeout: 10 * time.Second}
	if !reflect.DeepEqual(t1, want) {
		t.Errorf("lab1 = %+v\nwant %+v", t1, want)
	}
	t2, _ := c.Resolve("root@lab2")
	if t2.User != "root" || t2.Port != 2200 || t2.Strict != "accept-new" || !reflect.DeepEqual(t2.KnownHosts, []string{"/tmp/a", "/tmp/b"}) || t2.ConnectTimeout != 3*time.Second {
		t.Errorf("root@lab2 = %+v", t2)
	}
	t3, _ := c.Resolve("other:2022")
	if t3.User != "nobody" || t3.Host != "other" || t3.Port != 2022 || t3.Strict != "yes" {
		t.Errorf("other:2022 = %+v (Host * gives the user; the default is a strict check)", t3)
	}
	os.WriteFile(p, []byte("Host x\n  StrictHostKeyChecking maybe\n"), 0o600)
	c, _ = LoadConfig(p)
	if _, err := c.Resolve("x"); err == nil || !strings.Contains(err.Error(), "want yes, accept-new or no") {
		t.Errorf("a bad StrictHostKeyChecking: %v", err)
	}
}
