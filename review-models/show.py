import json,sys
d=json.load(open(sys.argv[1]+'/summary.json'))
for v in (d['variants'] if 'variants' in d else [d]):
  print('==',v['variant'],'req',v['requests'],'succ',v['succeeded'],'full',v['answered_full'],'degr',v['degraded'],'failed',v['failed'],'unans',v['unanswered'], v['failed_by_reason'] and {k:x for k,x in v['failed_by_reason'].items() if x})
  for e in v['edges']: print('  ',e['caller'],'->',e['callee'],'att',e['attempts'],'canc',e['cancellations'],'fb',e['fallback'],'cache',e['cache'], 'fan',e['fan_out'])
  for s in v['services']: print('  ',s['name'],{k:s[k] for k in ('calls','completed','failed','cancelled','wasted','rejected')})
