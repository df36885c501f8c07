#!/usr/bin/env python3
"""The programs of Laser's `eval.py` (karmaresearch/Laser: ♢ and joins over IRIs, □ over
one and two arguments, three copies of a rule, the cooling system with `@` heads), window
sizes 3 and 10, on small seeded streams written as Laser's own stream classes write them
(IRIs as names and constants): Laser (through laser_driver.py) against `stgflow --mode
laser`, line by line.

    LASER_HOME=~/src/Laser-py3 python3 scripts/peers/laser_eval_programs.py [STGFLOW]

The cases are left in $OUT (default /tmp/laser-eval)."""
import random, subprocess, os, sys
P = 'http://example.org/stream/predicate#'
def progs(w):
    return {
     'diamond': [f"'{P}p1'(X,Y) :- time_win({w}, 0, 1, diamond('{P}p'(X,Y)))"],
     'box1': [f"z(X) :- time_win({w}, 0, 1, box(p(X)))"],
     'box2': [f"h(X,Y) :- time_win({w}, 0, 1, box(p(X,Y)))"],
     'join': [f"'{P}p1'(X,Z) :- time_win({w}, 0, 1, diamond('{P}p'(X,Y))) and time_win({w} ,0,1,diamond('{P}p'(Y,Z)))"],
     'multiple': [f"'{P}p1'(X,Z) :- time_win({w}, 0, 1, diamond('{P}p'(X,Y))) and time_win({w},0,1,diamond('{P}p'(Y,Z)))"] * 3,
     'cooling': [
        f"@(T, steam(V)) :- time_win({w}, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)",
        f"@(T, liquid(V)) :- time_win({w}, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)",
        f"@(T, isSteam) :- time_win({w}, 0, 1, @(T, steam(V)))",
        f"@(T, isLiquid)  :- time_win({w}, 0, 1, @(T, liquid(V)))",
        f"alarm :- time_win({w}, 0, 1, box(isSteam))",
        f"normal :- time_win({w}, 0, 1, box(isLiquid))",
        f"veryHot(T) :- time_win({w},0,1, @(T, steam(V))) and COMP(>=, V, 150)",
        f"veryCold(T) :- time_win({w},0,1, @(T, liquid(V))) and COMP(=, V, 1)",
        "freeze :- not(alarm) and not(normal)"],
    }
def stream(name, rnd, points=30):
    lines = []
    for t in range(points):
        if name in ('diamond', 'join', 'multiple'):
            atoms = [f"{P}p(http://example.org/stream/subject#s{rnd.randrange(6)},http://example.org/stream/object#o{rnd.randrange(6)})" for _ in range(3)]
            if name != 'diamond':
                atoms = [f"{P}p(n{rnd.randrange(5)},n{rnd.randrange(5)})" for _ in range(3)]
        elif name == 'box1':
            atoms = [f"p({rnd.randrange(3)})" for _ in range(2)]
        elif name == 'box2':
            atoms = [f"p(a{rnd.randrange(2)},b{rnd.randrange(2)})" for _ in range(2)]
        else:
            atoms = [f"temp({rnd.choice([1, 50, 99, 100, 120, 150, 199])})"]
        lines.append(f"{t}: " + " ".join(atoms))
    return f"#timeline 0 {points-1}\n" + "\n".join(lines) + "\n"
stg = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else 'stgflow'
out = os.path.abspath(os.environ.get('OUT', '/tmp/laser-eval'))
home = os.environ.get('LASER_HOME') or sys.exit('set LASER_HOME to a Python 3 checkout of Laser')
driver = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'laser_driver.py')
total = {}
for w in (3, 10):
    for name, rules in progs(w).items():
        for seed in range(3):
            d = f'{out}/{name}_{w}_{seed}'; os.makedirs(d, exist_ok=True)
            open(f'{d}/p.lars', 'w').write('\n'.join(rules) + '\n')
            open(f'{d}/s.laser', 'w').write(stream(name, random.Random(seed * 100 + w)))
            env = dict(os.environ, LASER_HOME=home)
            laser = subprocess.run([sys.executable, '-W', 'ignore', driver, f'{d}/p.lars', f'{d}/s.laser'], capture_output=True, text=True, env=env)
            ours = subprocess.run([stg, 'run', f'{d}/p.lars', f'{d}/s.laser', '--mode', 'laser'], capture_output=True, text=True)
            if laser.returncode != 0:
                status = 'laser failed: ' + laser.stderr.strip().splitlines()[-1][:120]
            elif ours.returncode != 0:
                status = 'stgflow rejected: ' + ours.stderr.strip().splitlines()[0][:150]
            else:
                a, b = laser.stdout.splitlines(), ours.stdout.splitlines()
                diff = [(x, y) for x, y in zip(a, b) if x != y]
                status = 'same' if not diff and len(a) == len(b) else f'differs at {len(diff)} points, first: laser [{diff[0][0] if diff else ""}] ours [{diff[0][1] if diff else ""}]'
            total.setdefault(status.split(':')[0].split(' at ')[0], 0)
            total[status.split(':')[0].split(' at ')[0]] += 1
            print(f'{name:9} w={w:<3} seed={seed} {status}')
print(total)
