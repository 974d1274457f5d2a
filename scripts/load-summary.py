#!/usr/bin/env python3
# One line per A/B load run (scripts/load-ab.sh NAME …): the spike minute's fire lateness, the
# completion fan-out, the suite's CPU from the spike to +10 s, and, when the statements window ran,
# the WAL of every statement, of the cluster and of the batch of marks.
#   scripts/load-summary.py NAME…
import json, re, sys, os
for n in sys.argv[1:]:
    d='.run/ab/'+n
    r=json.load(open(d+'/report.json'))
    rep=open(d+'/report.txt').read()
    spike=r['spikeAt']
    m=re.search(re.escape(spike)+r'\s+(\d+)\s+([\d.]+)\s+([\d.]+)', rep)
    fo=re.search(r'completion fan-out\s+\d+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)', rep)
    cpu=open(d+'/cpu.txt').read()
    line=next(l for l in cpu.splitlines() if l.startswith('[ +0.0 s, +10.0 s]'))
    parts=dict(re.findall(r'(\w+) (\d+\.\d+)', line.split('idle')[1].split(None,1)[1]))
    suite=sum(float(v) for k,v in parts.items() if k not in ('chronirctl','other'))
    out=f"{n}: spike fire p50/p99 {m.group(2)}/{m.group(3)} ms; fan-out p50/p99 {float(fo.group(1))/1000:.2f}/{float(fo.group(2))/1000:.2f} s; suite {suite:.2f} CPU-s ({suite/5:.2f} ms/round), pg {parts.get('postgres')}, gen {parts.get('chronirctl')}"
    lost=re.search(r'fire\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\d+)', rep); out+=f"; fire lost {lost.group(3)} dup {lost.group(4)}"
    if os.path.exists(d+'/statements.txt'):
        st=open(d+'/statements.txt').read().splitlines()
        tot=st[2]; wal=st[7]
        mk=[l for l in st if 'INSERT INTO completions' in l]
        out+=f"\n   statements total: {tot.strip()}\n   pg_stat_wal: {wal.strip()}\n   marks: {mk[0][:120] if mk else '-'}"
    print(out)
