//go:build !olmsync_light

package main

import (
	"io"
	"testing"
)

// TestLocalDashboard: --local serves the dashboard on loopback, readable without a token,
// unless the flags say otherwise; without --local it is off unless --dashboard-addr is set.
func TestLocalDashboard(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		local    bool
		addr     string
		readable bool
	}{
		{nil, false, "", false},
		{nil, true, LocalDashboardAddr, true},
		{[]string{"--dashboard-addr", "127.0.0.1:9999"}, true, "127.0.0.1:9999", true},
		{[]string{"--dashboard-addr", ""}, true, "", true},
		{[]string{"--dashboard-anonymous-read=false"}, true, LocalDashboardAddr, false},
		{[]string{"--dashboard-addr", ":9400", "--dashboard-anonymous-read"}, false, ":9400", true},
	} {
		// The flags of `olmsync run`, read into the options localDashboard adjusts.
		o := &runOptions{}
		cmd := newRunCommand()
		cmd.SetErr(io.Discard)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		o.dashboardAddr, _ = cmd.Flags().GetString("dashboard-addr")
		o.dashboardAnonymousRead, _ = cmd.Flags().GetBool("dashboard-anonymous-read")
		if tc.local {
			o.localDashboard(cmd)
		}
		if o.dashboardAddr != tc.addr || o.dashboardAnonymousRead != tc.readable {
			t.Errorf("%v (local %v): addr %q anonymous read %v, want %q %v", tc.args, tc.local, o.dashboardAddr, o.dashboardAnonymousRead, tc.addr, tc.readable)
		}
	}
}
