package launcher

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeInventory(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadInventoryAndPlace(t *testing.T) {
	p := writeInventory(t, "# the lab\nroot@10.77.0.11\n\nlab2 ids=5,6 addr=192.168.56.12 # pinned\nvagrant@[fe80::1]:2222\n")
	hosts, err := ReadInventory(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 3 || hosts[1].Target != "lab2" || !reflect.DeepEqual(hosts[1].IDs, []int{5, 6}) || hosts[1].Addr != "192.168.56.12" {
		t.Fatalf("hosts = %+v", hosts)
	}
	at, err := PlaceOnHosts(hosts, 7)
	if err != nil {
		t.Fatal(err)
	}
	// 5 and 6 pinned to host 1; 1,2,3,4,7 round-robin over hosts 0,1,2
	want := map[int]int{1: 0, 2: 1, 3: 2, 4: 0, 5: 1, 6: 1, 7: 1}
	if !reflect.DeepEqual(at, want) {
		t.Errorf("PlaceOnHosts = %v, want %v", at, want)
	}
	if got := hostIDs(at, 1); !reflect.DeepEqual(got, []int{2, 5, 6, 7}) {
		t.Errorf("hostIDs(1) = %v", got)
	}
}

func TestReadInventoryErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "lists no host"},
		{"# only a comment\n", "lists no host"},
		{"@lab1\n", `line 1: "@lab1": empty user before @`},
		{"10.0.0.1:0\n", `port "0" is not a number in 1..65535`},
		{"10.0.0.1:ssh\n", `port "ssh" is not a number in 1..65535`},
		{"a:1\na:1\n", "listed twice (also on line 1)"},
		{"a:1 ids=1,x\n", `ids: "x" is not a node ID`},
		{"a:1 nodes=1\n", `unexpected "nodes=1"`},
		{"a:1 addr=lab1\n", `addr: "lab1" is not an IPv4 address`},
	} {
		_, err := ReadInventory(writeInventory(t, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
	if _, err := ReadInventory(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "Config.Hosts") {
		t.Errorf("missing file: err = %v", err)
	}
	hosts := []HostSpec{{Target: "a:1", IDs: []int{9}, Line: 1}}
	if _, err := PlaceOnHosts(hosts, 5); err == nil || !strings.Contains(err.Error(), "places node 9, but the cluster has nodes 1..5") {
		t.Errorf("PlaceOnHosts out of range: %v", err)
	}
	hosts = []HostSpec{{Target: "a:1", IDs: []int{2}, Line: 1}, {Target: "b:1", IDs: []int{2}, Line: 2}}
	if _, err := PlaceOnHosts(hosts, 5); err == nil || !strings.Contains(err.Error(), "places node 2 twice (lines 1 and 2)") {
		t.Errorf("PlaceOnHosts twice: %v", err)
	}
}
