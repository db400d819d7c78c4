package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/olmsync/olmsync/check/preview"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/internal/testenv"
)

// docsWithCommands are the pages whose code blocks hold olmsync commands.
var docsWithCommands = []string{"README.md", "docs/ci.md", "docs/policy.md", "examples/README.md"}

// TestDocsCommands runs every `olmsync check` and `olmsync apps` command the docs show
// (in code blocks: the quick start, the GitHub Actions and GitLab CI snippets…) on a
// pull request of a real repository, so that a flag the docs use and the CLI does not
// have, or a value it refuses, fails here. Shell variables are set as CI would set them
// ($BASE to the base branch); commands on a URL are left out (no network in tests); a
// command with --kubeconfig reads the envtest API server.
func TestDocsCommands(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	repo := gittest.Init(t)
	gittest.Commit(t, repo, map[string]string{
		"olmsync.yaml":             "apps:\n- {name: team-a, path: team-a, namespace: team-a}\n",
		"team-a/subscription.yaml": subscriptionYAML, // OP005, in both revisions
	}, "base")
	gittest.Git(t, repo, "checkout", "-q", "-b", "feature")
	gittest.Commit(t, repo, map[string]string{"team-a/installplan.yaml": installPlanYAML}, "OP010")
	runnerTemp := t.TempDir()
	t.Chdir(repo)

	commands := 0
	for _, page := range docsWithCommands {
		for _, c := range docCommands(t, filepath.Join(root, page)) {
			args := c.args
			for i, a := range args {
				a = strings.ReplaceAll(a, "$RUNNER_TEMP", runnerTemp)
				if strings.HasPrefix(a, "examples/") {
					a = filepath.Join(root, a)
				} else if name, rest, ok := strings.Cut(a, "=examples/"); ok { // --cluster-state alpha=examples/...
					a = name + "=" + filepath.Join(root, "examples", rest)
				}
				args[i] = a
			}
			if i := indexOf(args, "--kubeconfig"); i >= 0 && i+1 < len(args) {
				args[i+1] = docsKubeconfig(t, args)
			}
			// The report files' folders exist, as the snippets make them (mkdir -p).
			for i, a := range args {
				file := ""
				if a == "--output-file" && i+1 < len(args) {
					file = args[i+1]
				} else if (a == "-o" || a == "--output") && i+1 < len(args) {
					_, file, _ = strings.Cut(args[i+1], "=")
				}
				if file != "" {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			commands++
			t.Run(c.where, func(t *testing.T) {
				out, err := run(t, args...)
				if err != nil && exitCode(err) != exitFindings {
					t.Errorf("olmsync %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			})
		}
	}
	if commands < 10 {
		t.Errorf("found %d olmsync commands in the docs; the extraction is broken", commands)
	}
}

// docsKubeconfig writes a kubeconfig for the envtest API server in which every context a
// command names with --context exists, so that the docs' commands read a real cluster.
func docsKubeconfig(t *testing.T, args []string) string {
	t.Helper()
	env := testenv.Get(t)
	path := env.UserKubeconfig(t, envtest.User{Name: "docs", Groups: []string{"system:masters"}})
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "--context" && i+1 < len(args) {
			_, name := preview.SplitCluster(args[i+1])
			cfg.Contexts[name] = cfg.Contexts[cfg.CurrentContext]
		}
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

type docCommand struct {
	where string // page:line
	args  []string
}

var (
	olmsyncCommand = regexp.MustCompile(`(?:^|[\s:])(?:\./bin/)?olmsync ((?:check|apps)\b.*)$`)
	baseVariable   = regexp.MustCompile(`\$\{BASE:\+([^}]*)\}`)
)

// docCommands finds the olmsync check and apps commands in the fenced code blocks of a
// page, expanded as a CI job would run them in a pull request.
func docCommands(t *testing.T, page string) []docCommand {
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	inCode := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		m := olmsyncCommand.FindStringSubmatch(line)
		if !inCode || m == nil {
			continue
		}
		cmd := m[1]
		if i := strings.Index(cmd, " #"); i >= 0 {
			cmd = cmd[:i] // a comment
		}
		cmd, _, _ = strings.Cut(cmd, "||")
		cmd = baseVariable.ReplaceAllString(cmd, "$1")
		cmd = strings.ReplaceAll(cmd, `"$BASE"`, "main")
		args := shellWords(cmd)
		if strings.Contains(cmd, "://") || strings.Contains(cmd, "[flags]") || len(args) == 0 {
			continue // a URL needs the network; "[flags]" is a synopsis
		}
		out = append(out, docCommand{where: filepath.Base(page) + ":" + strconv.Itoa(n), args: args})
	}
	return out
}

// shellWords splits a command line on spaces, keeping double-quoted words whole.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
