package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
)

// commandOf is the command that sets the fields of each type the validators name.
var commandOf = map[string][]string{
	"Config": {"run"}, "option": {"run"}, "explore.Config": {"explore"},
	"FailoverConfig": {"bench", "failover"}, "ChaosConfig": {"bench", "chaos"}, "ComplexityPlan": {"bench", "complexity"},
	"RSDPPlan": {"bench", "rsdp"}, "ScalePlan": {"bench", "scale"},
}

// validatorFields are the fields the libraries' field.Errors can name, read from their sources: each
// field.Error's Field and Also, and the names assigned to a field.Error's Field. A Field made of
// "option " and an option's key stands for every option an algorithm reads.
func validatorFields(t *testing.T) []string {
	t.Helper()
	var names []string
	options := func() {
		for _, name := range election.Names() {
			alg, _ := election.Lookup(name)
			for _, k := range alg.Options {
				names = append(names, "option "+k)
			}
		}
	}
	lit := func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil {
				names = append(names, s)
			}
		case *ast.BinaryExpr:
			if l, ok := e.X.(*ast.BasicLit); ok && l.Value == `"option "` {
				options()
				return
			}
			t.Errorf("a field.Error's Field built as %T: name it by a literal, or add its case here", e)
		default:
			t.Errorf("a field.Error's Field given as %T: name it by a literal, or add its case here", e)
		}
	}
	fset := token.NewFileSet()
	for _, pkg := range []string{"launcher", "explore", "bench", "election"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if sel, ok := n.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Error" || sel.X.(*ast.Ident).Name != "field" {
						return true
					}
					for _, el := range n.Elts {
						kv := el.(*ast.KeyValueExpr)
						switch kv.Key.(*ast.Ident).Name {
						case "Field":
							lit(kv.Value)
						case "Also":
							for _, a := range kv.Value.(*ast.CompositeLit).Elts {
								lit(a)
							}
						}
					}
				case *ast.AssignStmt: // e.Field = "Config.ProbeTimeout"
					for i, l := range n.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Field" && i < len(n.Rhs) {
							lit(n.Rhs[i])
						}
					}
				}
				return true
			})
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestEveryFieldHasAFlag: every field a validator can name maps to a flag, which the command that
// sets the field's type has; and the message written in flags is the field.Error's Format.
func TestEveryFieldHasAFlag(t *testing.T) {
	fields := validatorFields(t)
	if len(fields) < 50 {
		t.Fatalf("only %d fields found in the validators: %q", len(fields), fields)
	}
	for _, name := range fields {
		flag, ok := flagOf[name]
		if !ok {
			t.Errorf("%s: a validator names it, and no flag maps to it", name)
			continue
		}
		path, ok := commandOf[typeOf(name)]
		if !ok {
			t.Errorf("%s: no command sets fields of type %s", name, typeOf(name))
			continue
		}
		cmds := newApp().Commands
		var c *cli.Command
		for _, step := range path {
			i := slices.IndexFunc(cmds, func(c *cli.Command) bool { return c.Name == step })
			if i < 0 {
				t.Fatalf("no command %q", path)
			}
			c, cmds = cmds[i], cmds[i].Subcommands
		}
		if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), strings.TrimPrefix(flag, "--")) }) {
			t.Errorf("%s maps to %s, which %s does not have", name, flag, strings.Join(path, " "))
		}
		fe := &field.Error{Field: name, Value: 1, Want: "want " + name + " and more", Also: []string{name}}
		if got, want := planFlags(fe.Error(), flagsOf(typeOf(name))), fe.Format(func(string) string { return flag }); got != want {
			t.Errorf("%s written in flags: %q, Format: %q", name, got, want)
		}
	}
}
