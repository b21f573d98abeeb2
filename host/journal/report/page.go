package report

// pageHTML is the report's template. It loads nothing: the Content-Security-Policy allows
// only inline style and script and data: images.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cua-host journal: {{.R.Dir}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:12px 20px}
header h1{font-size:18px;margin:0}
.ok{color:#1a7f37}.bad{color:#cf222e}
main{padding:16px 20px}
section{background:#fff;border:1px solid #d8dde4;border-radius:6px;padding:12px 16px;margin-bottom:16px}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
.filters label{margin-right:14px}
.call{border-left:4px solid #8c959f;background:#fff;border-radius:4px;margin:10px 0;padding:8px 12px}
.call.s-ok{border-color:#1a7f37}.call.s-refused{border-color:#cf222e}.call.s-error{border-color:#bf8700}.call.s-unknown{border-color:#8250df}
.call h3{font-size:15px;margin:0 0 4px}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;background:#eaeef2;margin-left:6px}
.s-ok .outcome{background:#dafbe1}.s-refused .outcome{background:#ffebe9}.s-unknown .outcome{background:#fbefff}.s-error .outcome{background:#fff8c5}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:4px 6px;margin:4px 0;font-size:12px}
.shots{display:flex;gap:12px;flex-wrap:wrap}
.shot{position:relative;display:inline-block}
.shot img{display:block;max-width:480px;width:100%;height:auto;border:1px solid #d8dde4}
.shot svg{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}
.shot figcaption{font-size:12px;color:#57606a}
.hidden{display:none}
.problems li{color:#cf222e}
</style>
</head>
<body>
<header><h1>cua-host journal</h1><div>{{.R.Dir}} — {{if .R.OK}}<span class="ok">verified: intact and complete</span>{{else}}<span class="bad">NOT verified</span>{{end}}</div></header>
<main>
<section id="verification"><h2>Verification</h2>
{{range .R.Segments}}<div class="segment"><b>segment {{.ID}}</b>: {{.Records}} records,
{{if .Intact}}<span class="ok">chain intact</span>{{else}}<span class="bad">chain broken</span>{{end}},
{{if .Complete}}<span class="ok">complete</span>{{else}}<span class="bad">{{or .CutOff "incomplete"}}</span>{{end}}.
head <code>{{printf "%.16s" .Head}}…</code>
{{if .Problems}}<ul class="problems">{{range .Problems}}<li>{{.String}}</li>{{end}}</ul>{{end}}
{{if .Unknown}}<div>outcome unknown: {{range .Unknown}}<span class="badge">record {{.Seq}} {{.Tool}} ({{.Session}})</span>{{end}}</div>{{end}}
</div>{{end}}
</section>
<section id="summary"><h2>Summary</h2>
<table>
<tr><th>calls</th><td id="sum-calls">{{.R.Summary.Calls}}</td></tr>
<tr><th>outcomes</th><td>{{range $k, $v := .R.Summary.Outcomes}}<span class="badge">{{$k}}: {{$v}}</span>{{end}}</td></tr>
<tr><th>refusals by code</th><td id="sum-refusals">{{range .Refusals}}<span class="badge">{{.K}}: {{.V}}</span>{{else}}none{{end}}</td></tr>
<tr><th>tool errors</th><td>{{.R.Summary.Errors}}</td></tr>
<tr><th>sessions</th><td>{{range .R.Sessions}}<span class="badge">{{.Label}} ({{.Mode}}{{if .Reason}}, {{.Reason}}{{end}})</span>{{end}}</td></tr>
</table>
<h3>Time per tool</h3>
<table id="per-tool"><tr><th>tool</th><th>calls</th><th>total</th></tr>
{{range .R.Summary.PerTool}}<tr><td>{{.Tool}}</td><td>{{.Calls}}</td><td>{{us .TotalUS}}</td></tr>{{end}}
</table>
</section>
<section class="filters"><h2>Timeline</h2>
<label>session <select id="f-session"><option value="">all</option>{{range .Sessions}}<option>{{.}}</option>{{end}}</select></label>
<label>tool <select id="f-tool"><option value="">all</option>{{range .Tools}}<option>{{.}}</option>{{end}}</select></label>
<label>outcome <select id="f-outcome"><option value="">all</option>{{range .Outcomes}}<option>{{.}}</option>{{end}}</select></label>
<span id="shown"></span>
<div id="timeline">
{{range .Calls}}<div class="call s-{{.Status}}" data-session="{{.Session}}" data-tool="{{.Tool}}" data-outcome="{{.Outcome}}" id="call-{{.N}}">
<h3>#{{.N}} {{.Tool}} <span class="badge outcome">{{.Outcome}}</span>{{if .Refusal}}<span class="badge refusal">{{.Refusal.Code}}</span>{{end}}{{if .IsError}}<span class="badge">error</span>{{end}}
<span class="badge">{{.Session}}</span><span class="badge">{{.Duration}}</span></h3>
<div>{{.Received}} — record {{.Record}}{{if .Decision}}, {{.Decision}} by {{.Layer}}{{end}}</div>
{{if .Refusal}}<div class="bad">{{.Refusal.Message}}</div>{{end}}
{{if .Note}}<div><i>{{.Note}}</i></div>{{end}}
{{if .Args}}<pre class="args">{{.Args}}</pre>{{end}}
{{if .Result}}<pre class="result">{{.Result}}</pre>{{end}}
{{if or .Before .After}}<div class="shots">
{{with .Before}}{{template "shot" (dict "S" . "L" "before")}}{{end}}
{{with .After}}{{template "shot" (dict "S" . "L" "after")}}{{end}}
</div>{{end}}
</div>
{{end}}
</div>
</section>
</main>
<script>
(function(){
  var fs=["session","tool","outcome"].map(function(k){return [k,document.getElementById("f-"+k)];});
  function apply(){
    var n=0,calls=document.querySelectorAll(".call");
    calls.forEach(function(c){
      var show=fs.every(function(f){return !f[1].value||c.dataset[f[0]]===f[1].value;});
      c.classList.toggle("hidden",!show); if(show)n++;
    });
    document.getElementById("shown").textContent=n+" of "+calls.length+" calls shown";
  }
  fs.forEach(function(f){f[1].addEventListener("change",apply);});
  apply();
})();
</script>
</body>
</html>
{{define "shot"}}<figure class="shot {{.L}}">{{if .S.Src}}<img alt="{{.L}}" src="{{.S.Src}}" width="{{.S.W}}" height="{{.S.H}}">
{{with .S.Mark}}<svg viewBox="0 0 {{$.S.W}} {{$.S.H}}" preserveAspectRatio="none">{{if .Point}}<circle cx="{{.X}}" cy="{{.Y}}" r="8" fill="none" stroke="#ff0040" stroke-width="3"/><circle cx="{{.X}}" cy="{{.Y}}" r="2" fill="#ff0040"/>{{else}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="none" stroke="#ff0040" stroke-width="3"/>{{end}}</svg>{{end}}
{{else}}<div>{{.S.Reason}}</div>{{end}}<figcaption>{{.L}}</figcaption></figure>{{end}}
`
