package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by the Makefile with -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildInfo describes this binary.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	BuildDate string `json:"buildDate,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func currentBuildInfo() buildInfo {
	b := buildInfo{
		Version:   version,
		Commit:    commit,
		BuildDate: date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if b.Version == "" {
		// `go install` or `go run` without the Makefile's ldflags: use the module version.
		b.Version = "devel"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
	}
	return b
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of olmsync",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := currentBuildInfo()
			switch output {
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			case "text", "":
				fmt.Fprintf(cmd.OutOrStdout(), "olmsync %s\n", b.Version)
				if b.Commit != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "commit:     %s\n", b.Commit)
				}
				if b.BuildDate != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "built:      %s\n", b.BuildDate)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "go:         %s\nplatform:   %s\n", b.GoVersion, b.Platform)
				return nil
			default:
				return fmt.Errorf("unknown output format %q: use text or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
