package launcher

// The cluster's shape on the console and in the plan: a general graph's edges, the ring shown.

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/topology"
)

// graphEdges are the edges between IDs of a general graph's --topology value: generated over the
// positions of the ring order, or read from an edge-list file (@FILE). A graph that is not connected
// is refused, naming the nodes cut off.
func graphEdges(spec string, order []int, seed int64) ([][2]int, error) {
	var pos [][2]int
	var err error
	if name, ok := strings.CutPrefix(spec, "@"); ok {
		f, ferr := os.Open(name)
		if ferr != nil {
			return nil, fmt.Errorf("cannot read the edge list: %w (want @FILE, a file of edges \"a b\", one per line)", ferr)
		}
		defer f.Close()
		pos, err = topology.ParseEdges(f, name, len(order))
	} else {
		pos, err = topology.Generate(spec, len(order), seed)
	}
	if err != nil {
		return nil, err
	}
	edges := topology.OnIDs(pos, order)
	if _, err := topology.NewGraph(spec, order, edges); err != nil {
		return nil, err
	}
	return edges, nil
}

// ringShown is the ring order for the console, in the order given, with runs of three or more
// consecutive IDs written as ranges ("[1-128]", "[64-1]", "[3 1-2 5-4]"): whole up to 32 items,
// then its start (the whole of it is in cluster.json).
func ringShown(ring []int) string {
	var items []string
	for i := 0; i < len(ring); {
		j := i
		step := 0
		if i+1 < len(ring) && (ring[i+1]-ring[i] == 1 || ring[i+1]-ring[i] == -1) {
			step = ring[i+1] - ring[i]
			for j+1 < len(ring) && ring[j+1]-ring[j] == step {
				j++
			}
		}
		if j-i >= 2 {
			items = append(items, fmt.Sprintf("%d-%d", ring[i], ring[j]))
			i = j + 1
			continue
		}
		items = append(items, strconv.Itoa(ring[i]))
		i++
	}
	if len(items) <= 32 {
		return "[" + strings.Join(items, " ") + "]"
	}
	return "[" + strings.Join(items[:16], " ") + fmt.Sprintf(" … and %d more in cluster.json]", len(items)-16)
}
