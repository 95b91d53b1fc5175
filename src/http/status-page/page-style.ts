import { SafeHtml } from './safe-html.js';

/** The page's only style sheet (inline, allowed by the CSP nonce): small, system fonts, readable on a phone. */
export const PAGE_STYLE = new SafeHtml(`
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d6dbe1;--card:#f6f8fa;--red:#c62828;--amber:#b26a00;--green:#2e7d32;--blue:#1565c0}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e9ed;--muted:#9aa4af;--line:#2f363e;--card:#1a1f25;--red:#ef5350;--amber:#ffb74d;--green:#66bb6a;--blue:#64b5f6}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:64rem;padding:.75rem;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
h1{font-size:1.3rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.2rem 0 .4rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}h3{font-size:1rem;margin:.6rem 0 .3rem}
.muted{color:var(--muted);font-weight:normal}.error{color:var(--red)}
#summary{margin:.2rem 0;padding:.4rem .6rem;border-radius:.4rem;background:var(--card)}#summary.bad{border-left:4px solid var(--red)}#summary.good{border-left:4px solid var(--green)}
.notice{padding:.4rem .6rem;border-left:4px solid var(--blue);background:var(--card)}
ul{list-style:none;padding:0;margin:0}
.alert,.silence,.send{background:var(--card);border:1px solid var(--line);border-radius:.4rem;padding:.5rem .6rem;margin:.4rem 0;overflow-wrap:anywhere}
.alert.firing{border-left:4px solid var(--red)}.alert.pending{border-left:4px solid var(--amber)}.alert.silenced{opacity:.8;border-left-color:var(--muted)}
.summary{margin:.3rem 0}.since{color:var(--muted)}.acked{margin:.3rem 0;color:var(--green)}
.badge{display:inline-block;font-size:.78rem;padding:0 .4rem;border-radius:.8rem;border:1px solid currentColor;white-space:nowrap}
.badge.firing,.badge.missing,.badge.down,.badge.failed,.badge.gave_up{color:var(--red)}.badge.pending,.badge.retrying,.badge.late,.badge.awaiting_data,.badge.in_jeopardy{color:var(--amber)}
.badge.arrived,.badge.up,.badge.sent{color:var(--green)}.badge.silenced,.badge.not_due,.badge.sev,.badge.inhibited{color:var(--muted)}
.labels{display:flex;flex-wrap:wrap;gap:.25rem;margin:.3rem 0}.label{font:12px/1.5 ui-monospace,Menlo,Consolas,monospace;background:var(--bg);border:1px solid var(--line);border-radius:.3rem;padding:0 .3rem;overflow-wrap:anywhere}.label-name{color:var(--muted)}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;vertical-align:top;padding:.3rem .4rem;border-bottom:1px solid var(--line);overflow-wrap:anywhere}td.rule{overflow-wrap:normal;word-break:keep-all;white-space:nowrap}
details.action summary{cursor:pointer;color:var(--blue);margin-top:.2rem}
form{display:flex;flex-wrap:wrap;gap:.4rem;align-items:end;margin:.4rem 0 0}form label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted);flex:1 1 10rem}
input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:.3rem;background:var(--bg);color:var(--fg);min-height:2.2rem}
button{background:var(--blue);border-color:var(--blue);color:#fff;cursor:pointer}button.secondary{background:transparent;color:var(--blue)}
@media (max-width:40rem){table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}table.stack thead{display:none}table.stack tr{border:1px solid var(--line);border-radius:.4rem;margin:.4rem 0;padding:.2rem .4rem;background:var(--card)}table.stack td{border:0;padding:.15rem 0}table.stack td::before{content:attr(data-label);display:block;font-size:.75rem;color:var(--muted)}}
footer{margin:1.5rem 0 .5rem;font-size:.85rem}a{color:var(--blue)}
`);
