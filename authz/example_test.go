package authz_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cua-host/cua-host/authz"
)

func ExampleParseManifest() {
	m, err := authz.ParseManifest([]byte(`version: 1
expires_after: 8h
idle_timeout: 30m
allow: {tools: [launch_app, click]}
resources:
  apps: [{executable: /usr/bin/xterm, launch: true}]
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.AllowTools, m.ExpiresAfter, m.IdleTimeout, m.Apps[0].Terminate)

	_, err = authz.ParseManifest([]byte("version: 1\nallow: {tools: [clik]}\n"), nil)
	fmt.Println(err)
	// Output:
	// [launch_app click] 8h0m0s 30m0s driver_launched
	// manifest: line 2: allow.tools[0]: unknown tool "clik"
}

func ExamplePipeline_Decide() {
	pipe := authz.NewPipeline(nil, nil) // no policy layer configured
	session := &authz.Authority{Label: "agent", Mode: authz.Standard}
	foreign := authz.Target{Resource: authz.Resource{Kind: authz.ResourceWindow, Op: authz.OpInput, PID: 4242, Window: 0x600001}}
	var grants authz.Grants
	now := time.Now()

	d := pipe.Decide(context.Background(), session, "click", nil, &foreign, &grants, now)
	fmt.Println("consent needed:", d.NeedsConsent, d.Resource)

	grants.Add(d.Resource.Key(), now, now.Add(time.Minute)) // the host's provider said yes
	d = pipe.Decide(context.Background(), session, "click", nil, &foreign, &grants, now)
	fmt.Println("consent needed:", d.NeedsConsent)

	protected := authz.Target{SelfPID: 1}
	d = pipe.Decide(context.Background(), &authz.Authority{Mode: authz.Unrestricted}, "kill_app", nil, &protected, nil, now)
	fmt.Println(d.Refusal.Code)
	// Output:
	// consent needed: true window:pid=4242,id=0x600001
	// consent needed: false
	// self_target_denied
}

func ExampleSanitize() {
	args := map[string]any{"text": "hi", "_session": "other", "_force": true}
	tool, clean := authz.Sanitize("type_text_chars", args)
	fmt.Println(tool, clean, len(args))
	// Output: type_text map[text:hi] 3
}
