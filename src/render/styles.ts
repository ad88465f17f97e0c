/**
 * The one stylesheet of everything Witness shows in a browser: the viewer serves it as /app.css and the
 * report inlines it, so a table, a badge or a heatmap looks the same in both. No rule loads anything.
 */
export const STYLESHEET = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg2:#f6f8fa;--red:#cf222e;--green:#1a7f37;--amber:#9a6700;--grey:#6e7781;--blue:#0969da}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:#fff}
a{color:var(--blue);text-decoration:none}a:hover{text-decoration:underline}
nav.top{display:flex;gap:1.2rem;align-items:baseline;padding:.6rem 2rem;background:#24292f;color:#fff}
nav.top a{color:#fff}nav.top .brand{font-weight:700;letter-spacing:.02em}
nav.top .where{margin-left:auto;color:#b6bdc5;font-size:12px;font-family:ui-monospace,monospace}
nav.top .live-state{color:#7ee787;font-size:12px}
main{max-width:1280px;margin:0 auto;padding:1rem 2rem 3rem}
h1{font-size:1.5rem;margin:.6rem 0}h1 small{font-weight:400;color:var(--muted);font-size:.65em}
h2{font-size:1.1rem;margin:1.4rem 0 .5rem}h2 small{font-weight:400;color:var(--muted)}h3{font-size:.95rem;margin:.6rem 0 .2rem}
.lead,.meta{color:var(--muted)}.muted{color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:.4rem 0 1rem}
th,td{border-bottom:1px solid var(--line);padding:.35rem .55rem;text-align:left;vertical-align:top}
thead th{background:var(--bg2);font-weight:600;border-top:1px solid var(--line);white-space:nowrap}
th.group{text-align:center}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.success{color:var(--red);font-weight:700}td.undetermined{color:var(--amber);font-weight:700}td.error{color:var(--grey);font-weight:700}
tbody tr:hover{background:#f6f8fa}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;overflow-wrap:break-word}
code.id{color:var(--muted);font-size:11.5px;white-space:nowrap}
td .sub{display:block;margin-top:.1rem}
table.runs{font-size:13px}table.runs td{max-width:18rem}table.runs thead th{white-space:normal;vertical-align:bottom}
code.gap{background:#fff8c5;border:1px solid #eed888;border-radius:4px;padding:0 .25rem;font-size:11.5px}
code.digest{font-size:11px;word-break:break-all;color:var(--muted)}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:.5rem .6rem}
.badge{display:inline-block;min-width:6.5em;text-align:center;padding:.05rem .5rem;border-radius:1rem;color:#fff;font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.03em}
.badge.success{background:var(--red)}.badge.failure{background:var(--green)}.badge.undetermined{background:var(--amber)}.badge.error{background:var(--grey);color:#fff}
.pill{display:inline-block;border:1px solid var(--line);border-radius:1rem;padding:0 .45rem;font-size:11px;color:var(--muted);background:#fff}
.pill.running{border-color:#d4a72c;color:var(--amber);background:#fff8c5}
.tripped{color:var(--red);font-weight:700}
.asr,.utility{font-size:1.05rem}.rate{font-variant-numeric:tabular-nums}
.criterion{font-size:13px}
form.filters,form.compare{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:center;background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;margin:.5rem 0}
form.compare h2{margin:0 1rem 0 0;font-size:1rem;width:100%}
select,button{font:inherit;padding:.15rem .3rem}select{max-width:30rem}
button{background:#1f883d;color:#fff;border:1px solid #1a7f37;border-radius:6px;padding:.2rem .8rem;cursor:pointer}
.count{color:var(--muted);margin:.3rem 0}
.problem{color:var(--red);font-weight:600}
.claim-cell{color:var(--muted);font-size:12.5px;max-width:28rem}
pre.diff .added{background:#dafbe1}pre.diff .removed{background:#ffebe9}
.crumbs{margin:.2rem 0 .4rem;color:var(--muted)}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:1rem;align-items:start;margin:1rem 0}
table.counts td:first-child,table.compare-table th[scope=row]{white-space:nowrap}
table.counts.library{table-layout:fixed}table.counts.library th:first-child{width:24%}table.counts.library th:last-child{width:30%}
.side{border:1px solid var(--line);border-radius:8px;padding:.3rem .9rem .6rem;min-width:0}
.side.claim{background:#fffdf0}
.side.verdict{border-left:6px solid var(--grey)}
.side.verdict.success{border-left-color:var(--red)}.side.verdict.failure{border-left-color:var(--green)}.side.verdict.undetermined{border-left-color:var(--amber)}
.verdict-word{font-size:1.05rem;font-weight:700}
.error{color:var(--red)}
.observation{border:1px solid var(--line);border-radius:8px;padding:.2rem .9rem;margin:.5rem 0}
.note{color:var(--amber);margin:.2rem 0}
ul.gaps li{margin:.15rem 0}
ol.tools{padding-left:1.6rem;font-size:13px}ol.tools li{margin:.15rem 0}
ol.tools .refused{color:var(--amber)}ol.tools .result{color:var(--muted)}
.disposition.refused{color:var(--amber);font-weight:600}.disposition.failed{color:var(--red)}code.method{font-weight:600}
dl{display:grid;grid-template-columns:9rem 1fr;gap:.2rem 1rem}dt{color:var(--muted)}dd{margin:0}
.empty{background:var(--bg2);border:1px dashed var(--line);border-radius:8px;padding:1rem}
tr.changed td{background:#fff}
@media (max-width:900px){.sides{grid-template-columns:1fr}main{padding:1rem}}
.esc{color:#8250df;background:#fbefff;border-radius:3px;padding:0 1px}
code.value{background:var(--bg2);border:1px solid var(--line);border-radius:4px;padding:0 .25rem;overflow-wrap:anywhere}
code.target{overflow-wrap:normal}
.alarm{background:#ffebe9;border:2px solid var(--red);border-radius:6px;padding:.4rem .6rem;font-weight:700}
tr.tripped td{background:#ffebe9}
tfoot th,tfoot td{background:var(--bg2);font-weight:600}
.heatmaps{display:flex;flex-wrap:wrap;gap:1rem 2rem;margin:.4rem 0 1rem}
figure.heatmap{margin:0;max-width:100%;overflow-x:auto}figure.heatmap svg{max-width:100%;height:auto}
figure.heatmap figcaption{color:var(--muted);font-size:12px}
figure.heatmap a:hover rect{stroke:var(--blue);stroke-width:2}
.change-list .kind{font-weight:600;text-transform:uppercase;font-size:11px;color:var(--muted)}
.tripwire{color:var(--amber)}
article.attempt{border:1px solid var(--line);border-left:6px solid var(--grey);border-radius:8px;padding:.4rem 1rem .8rem;margin:1.2rem 0}
article.attempt.success{border-left-color:var(--red)}article.attempt.failure{border-left-color:var(--green)}article.attempt.undetermined{border-left-color:var(--amber)}
article.attempt.control{border-style:dashed}
article.attempt>h3{font-size:1rem;margin:.4rem 0}
table.compact td{padding:.2rem .5rem;font-size:12.5px}
.omitted{background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem}
header.report{border-bottom:2px solid var(--line);margin-bottom:1rem}
section.run>h2{font-size:1.35rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:2.2rem}
@media print{nav.top{display:none}article.attempt{break-inside:avoid}}
`;
