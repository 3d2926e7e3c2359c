import { planExperiment } from './src/statistics/plan.ts';
import { simulateLeak } from './src/statistics/simulate.ts';
const v=[{key:'A',description:''},{key:'B',description:''}];
const base = (b:number, mde:number, kind:'absolute'|'relative', extra={}) => planExperiment({id:'x',hypothesis:'',subject:'',variants:v,metric:'reply_rate',audience:'',baselineRate:b,minimumDetectableEffect:mde, effectKind: kind, ...extra});
const t0=Date.now();
const p4 = base(0.04,0.02,'relative');
const show=(name:string, r:any)=>console.log(name, (r.correct*100).toFixed(1), (r.falseWinner*100).toFixed(1), r.falseWinnerInterval.map((x:number)=>(x*100).toFixed(1)).join('-'), 'paused', r.paused, 'n', Math.round(r.averagePerVariant), 'promised', r.promised.toFixed(2), 'replanned', r.replanned, ((Date.now()-t0)/1000).toFixed(0)+'s');
show('1% replan', simulateLeak(p4,[0.01,0.015],300,1,{replan:true}));
show('1% replan null', simulateLeak(p4,[0.01,0.01],300,1,{replan:true}));
