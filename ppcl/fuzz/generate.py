"""Random OpenCL C kernels free of undefined behaviour and races by construction.

After CLsmith (Lidbury et al., "Many-core compiler fuzzing"): integer computation only (no
floating-point rounding that devices may legitimately do differently), every operation chosen
among those whose result OpenCL C defines for every operand:

- unsigned arithmetic wraps; signed values are combined through ``as_int``/``as_uint`` of
  unsigned arithmetic, or by operations that cannot overflow (bitwise, comparisons, ``min``,
  ``max``, ``abs``, saturating builtins);
- a divisor is ``y | 1``, never zero; shift counts are masked by the language; a clamp's
  bounds are ordered; array indices are masked into range;
- every variable is initialized where it is declared, and every work-item writes only its own
  element of the output.

Modes (CLsmith's): ``plain``; ``barrier`` (each work-item writes its own slot of a ``__local``
array, a barrier, reads another's, a barrier; barriers only under uniform control);
``vector`` (``uint4``/``int2`` values, swizzles, component-wise builtins); ``atomic``
(commutative atomic reductions into a few global counters, whose return values are not used);
``struct`` (a struct in private memory, passed by value to a helper); ``pointer`` (a private
array walked through a pointer into it); ``loop`` (loops with uniform and id-dependent bounds).
Every kernel mixes ``plain`` statements into its mode's.

A ``FuzzProgram`` holds the source as lines, one statement of the kernel body a line, so the
reducer (``reduce.py``) can drop lines and keep the program valid most of the time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MODES = ("plain", "barrier", "vector", "atomic", "struct", "pointer", "loop", "narrow")
_NARROW = ("uchar4", "ushort4")  # the narrow mode's vectors: unsigned, so lanes wrap defined

# scalar types a variable may have, with the C cast that brings a uint into the type
_SCALARS = ("uint", "int", "ushort", "short", "uchar", "char", "ulong")
_UNSIGNED = {"uint": "uint", "int": "uint", "ushort": "ushort", "short": "ushort",
             "uchar": "uchar", "char": "uchar", "ulong": "ulong"}
# The atomic mode's global counters, one operation each: atomics of one commutative operation
# give the same sum in any order, those of two (an and, then an or) do not.
ATOMIC_COUNTERS = ("add", "xor", "or", "and", "min", "max")
_ARRAY = 8  # entries of private arrays (a power of two: indices are masked)


@dataclass(frozen=True)
class FuzzProgram:
    """One generated kernel ``fuzz`` and its launch: ``out[gid]`` gets a hash of every
    variable, ``acc`` the atomic counters; ``data`` is the input array's seed."""

    seed: int
    mode: str
    head: tuple[str, ...]  # lines before the kernel: types and helpers
    body: tuple[str, ...]  # the kernel body, one statement (or brace) a line
    global_size: int
    local_size: int

    @property
    def source(self) -> str:
        return "\n".join(self.lines) + "\n"

    @property
    def lines(self) -> tuple[str, ...]:
        return (*self.head,
                "__kernel void fuzz(__global uint *out, __global const uint *in, uint n,",
                "                   __global uint *acc)",
                "{", *self.body, "}")

    def with_body(self, body: tuple[str, ...]) -> FuzzProgram:
        return FuzzProgram(self.seed, self.mode, self.head, body, self.global_size,
                           self.local_size)


@dataclass
class _Scope:
    """Variables visible at a point, by type; ``frozen`` names may be read, not written
    (loop counters)."""

    names: dict[str, list[str]] = field(default_factory=dict)
    frozen: set[str] = field(default_factory=set)

    def child(self) -> _Scope:
        return _Scope({t: list(v) for t, v in self.names.items()}, set(self.frozen))

    def add(self, type_name: str, name: str) -> None:
        self.names.setdefault(type_name, []).append(name)

    def of(self, type_name: str) -> list[str]:
        return self.names.get(type_name, [])

    def writable(self, type_name: str) -> list[str]:
        return [n for n in self.of(type_name) if n not in self.frozen]


class _Generator:
    def __init__(self, seed: int, mode: str) -> None:
        self.rng = random.Random(seed)
        self.mode = mode
        self.counter = 0
        self.head: list[str] = []
        self.body: list[str] = []
        self.all_vars: list[tuple[str, str]] = []  # (type, name) at the kernel's top level

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ------------------------------------------------------------ expressions

    def uint_expr(self, scope: _Scope, depth: int) -> str:
        """An expression of type uint, defined for every value of its operands."""
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25:
            return self.uint_leaf(scope)
        a = self.uint_expr(scope, depth - 1)
        b = self.uint_expr(scope, depth - 1)
        choice = rng.randrange(17)
        if choice < 6:
            return f"({a} {rng.choice(['+', '-', '*', '&', '|', '^'])} {b})"
        if choice == 6:
            return f"({a} {rng.choice(['<<', '>>'])} {b})"  # OpenCL masks the count
        if choice == 7:
            return f"({a} {rng.choice(['/', '%'])} ({b} | 1u))"
        if choice == 8:
            return f"{rng.choice(['min', 'max', 'add_sat', 'sub_sat', 'hadd', 'rhadd', 'mul_hi', 'abs_diff', 'rotate'])}({a}, {b})"
        if choice == 9:
            return f"{rng.choice(['popcount', 'clz'])}({a})"
        if choice == 10:
            c = self.uint_expr(scope, depth - 1)
            return f"clamp({a}, min({b}, {c}), max({b}, {c}))"
        if choice == 11:
            return f"({self.condition(scope, depth - 1)} ? {a} : {b})"
        if choice == 12:
            return f"(uint){self.int_expr(scope, depth - 1)}"
        if choice == 13:
            return f"abs({self.int_expr(scope, depth - 1)})"
        if choice == 14:
            narrow = rng.choice(["uchar", "ushort", "char", "short"])
            sat = rng.random() < 0.5
            return (f"(uint)convert_{narrow}_sat({a})" if sat
                    else f"(uint)({narrow}){a}")
        if choice == 15:
            return f"(uint)({a} ^ ((ulong){b} << 17))"
        return f"mad_hi({a}, {b}, {self.uint_leaf(scope)})"

    def int_expr(self, scope: _Scope, depth: int) -> str:
        """An expression of type int without signed overflow."""
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            names = scope.of("int")
            if names and rng.random() < 0.7:
                return rng.choice(names)
            return str(rng.randint(-1000, 1000))
        a = self.int_expr(scope, depth - 1)
        b = self.int_expr(scope, depth - 1)
        choice = rng.randrange(7)
        if choice == 0:
            op = rng.choice(["+", "-", "*"])
            return f"as_int(as_uint({a}) {op} as_uint({b}))"
        if choice == 1:
            return f"({a} {rng.choice(['&', '|', '^'])} {b})"
        if choice == 2:
            return f"{rng.choice(['min', 'max', 'add_sat', 'sub_sat', 'hadd'])}({a}, {b})"
        if choice == 3:
            return f"({a} {rng.choice(['<', '<=', '==', '!=', '>', '>='])} {b})"
        if choice == 4:
            return f"as_int({self.uint_expr(scope, depth - 1)})"
        if choice == 5:
            return f"(int)(short)({a})"
        return f"(~{a})"

    def uint_leaf(self, scope: _Scope) -> str:
        rng = self.rng
        options: list[str] = []
        for type_name in _SCALARS:
            for name in scope.of(type_name):
                options.append(name if type_name == "uint" else f"(uint){name}")
        for name in scope.of("uint4"):
            options.append(f"{name}.{rng.choice('xyzw')}")
        for name in scope.of("int2"):
            options.append(f"as_uint({name}.s{rng.randrange(2)})")
        if options and rng.random() < 0.8:
            return rng.choice(options)
        return rng.choice(["gid", "lid", "n", "(uint)get_group_id(0)", "(uint)get_local_size(0)",
                           f"{rng.randrange(1 << 32)}u", str(rng.randrange(64)) + "u"])

    def condition(self, scope: _Scope, depth: int) -> str:
        a = self.uint_expr(scope, depth)
        b = self.uint_expr(scope, depth)
        return f"({a} {self.rng.choice(['<', '<=', '==', '!=', '>', '>='])} {b})"

    def uniform_expr(self) -> str:
        """A uint expression with the same value in every work-item of a group."""
        return self.rng.choice(["n", "(uint)get_group_id(0)", "(uint)get_local_size(0)",
                                f"{self.rng.randrange(1 << 16)}u"])

    # ------------------------------------------------------------ statements

    def assign(self, scope: _Scope, depth: int) -> str:
        rng = self.rng
        candidates = [(t, n) for t in _SCALARS for n in scope.writable(t)]
        if not candidates:
            return f"out[gid] ^= {self.uint_expr(scope, depth)};"
        type_name, name = rng.choice(candidates)
        if type_name == "int":
            return f"{name} = {self.int_expr(scope, depth)};"
        value = self.uint_expr(scope, depth)
        if type_name == "uint" and rng.random() < 0.4:
            return f"{name} {rng.choice(['+=', '-=', '*=', '^=', '|=', '&='])} {value};"
        if type_name == "ulong":
            return f"{name} = ({name} << 7) ^ (ulong){value};"
        return f"{name} = ({type_name})({value});"

    def declare(self, scope: _Scope, type_name: str, top: bool) -> str:
        name = self.fresh("v")
        if type_name == "int":
            init = self.int_expr(scope, 2)
        elif type_name == "uint4":
            parts = ", ".join(self.uint_expr(scope, 1) for _ in range(4))
            init = f"(uint4)({parts})"
        elif type_name in _NARROW:
            elem = type_name[:-1]
            parts = ", ".join(f"({elem}){self.uint_expr(scope, 1)}" for _ in range(4))
            init = f"({type_name})({parts})"
        elif type_name == "int2":
            init = f"(int2)({self.int_expr(scope, 1)}, {self.int_expr(scope, 1)})"
        else:
            init = f"({type_name})({self.uint_expr(scope, 2)})"
        scope.add(type_name, name)
        if top:
            self.all_vars.append((type_name, name))
        return f"{type_name} {name} = {init};"

    def block(self, scope: _Scope, depth: int, count: int, out: list[str],
              uniform: bool) -> None:
        """``count`` statements of the mode into ``out``; ``uniform``: control reaching here
        is the same for every work-item of a group (barriers are allowed)."""
        rng = self.rng
        for _ in range(count):
            roll = rng.random()
            if roll < 0.45 or depth <= 0:
                out.append(self.assign(scope, 3))
            elif roll < 0.6:
                out.append(f"if {self.condition(scope, 2)} {{")
                self.block(scope.child(), depth - 1, rng.randint(1, 3), out, False)
                out.append("} else {")
                self.block(scope.child(), depth - 1, rng.randint(1, 2), out, False)
                out.append("}")
            elif roll < 0.7:
                out.append(self.declare(scope, rng.choice(_SCALARS), False))
            else:
                self.mode_statement(scope, depth, out, uniform)

    def narrow_statement(self, scope: _Scope, out: list[str]) -> None:
        """A statement on ``uchar4`` or ``ushort4`` vectors, whose lanes wrap at 8 or 16 bits
        where C computes a scalar of the element type in ``int``."""
        rng = self.rng
        t = rng.choice(_NARROW)
        names = scope.writable(t)
        if not names or rng.random() < 0.15:
            out.append(self.declare(scope, t, False))
            return
        u = rng.choice(names)
        elem = t[:-1]
        other = rng.choice(scope.of(t))
        value = f"({t})(({elem}){self.uint_expr(scope, 1)})"
        roll = rng.randrange(7)
        if roll == 0:
            out.append(f"{u} = ({u} + {other}.wzyx) / ({other}.yzwx | ({t})(1));")
        elif roll == 1:
            out.append(f"{u} = ~{u} * {value} - {other}.zwxy;")
        elif roll == 2:
            fn = rng.choice(["min", "max", "add_sat", "sub_sat", "hadd", "rhadd", "abs_diff"])
            out.append(f"{u} = {fn}({u}, {value});")
        elif roll == 3:
            op = rng.choice(["<", "<=", "==", "!=", ">", ">="])
            out.append(f"{u} = select({u}, {other}.wzyx, {u} {op} {value});")
        elif roll == 4:
            out.append(f"{u} ^= ({u} & {other}.yxwz) | (-{u} >> ({t})(3));")
        elif roll == 5:  # a vector of narrow elements loaded from memory (8 bytes of ushort4
            # read two words of ``in``)
            words, guard = ("n", "") if t == "uchar4" else ("(n - 1u)", "if (n > 1u) ")
            out.append(f"{guard}{u} += vload4(0, (__global const {elem} *)(in + "
                       f"({self.uint_expr(scope, 1)}) % {words}));")
        else:
            target = rng.choice(scope.writable("uint") or ["out[gid]"])
            out.append(f"{target} ^= (uint){u}.s{rng.randrange(4)} * 3u + "
                       f"(uint)({u} * {other}).s{rng.randrange(4)};")

    def loop(self, scope: _Scope, depth: int, out: list[str], uniform: bool) -> None:
        rng = self.rng
        counter = self.fresh("i")
        if rng.random() < 0.5:
            bound, inner_uniform = f"{rng.randint(1, 6)}u", uniform
        elif rng.random() < 0.5:
            bound, inner_uniform = "(lid & 3u) + 1u", False
        else:
            bound, inner_uniform = f"({self.uniform_expr()} & 7u)", uniform
        out.append(f"for (uint {counter} = 0; {counter} < {bound}; {counter}++) {{")
        inner = scope.child()
        inner.add("uint", counter)
        inner.frozen.add(counter)
        self.block(inner, depth - 1, rng.randint(1, 3), out, inner_uniform)
        out.append("}")

    def mode_statement(self, scope: _Scope, depth: int, out: list[str],
                       uniform: bool) -> None:
        rng = self.rng
        mode = self.mode
        if mode == "loop" or (mode == "plain" and rng.random() < 0.3):
            self.loop(scope, depth, out, uniform)
        elif mode == "barrier":
            if uniform:
                out.append(f"lmem[lid] = {self.uint_expr(scope, 2)};")
                out.append("barrier(CLK_LOCAL_MEM_FENCE);")
                target = rng.choice(scope.writable("uint") or ["out[gid]"])
                shift = rng.randrange(1, 64)
                out.append(f"{target} ^= lmem[(lid + {shift}u) % (uint)get_local_size(0)];")
                out.append("barrier(CLK_LOCAL_MEM_FENCE);")
            else:
                self.loop(scope, depth, out, uniform)
        elif mode == "vector":
            names = scope.writable("uint4")
            if not names or rng.random() < 0.2:
                out.append(self.declare(scope, "uint4", False))
                return
            v = rng.choice(names)
            roll = rng.randrange(7)
            if roll == 0:
                lanes = rng.choice(["x", "y", "z", "w", "xy", "zw", "yx", "wz"])
                value = self.uint_expr(scope, 1)
                if len(lanes) > 1:
                    value = f"(uint{len(lanes)})({value})"
                out.append(f"{v}.{lanes} = {value};")
            elif roll == 1:
                other = rng.choice(scope.of("uint4"))
                op = rng.choice(["+", "-", "*", "^", "&", "|", "<<", ">>"])
                out.append(f"{v} = {v} {op} {other}.{''.join(rng.sample('xyzw', 4))};")
            elif roll == 2:
                fn = rng.choice(["min", "max", "rotate", "add_sat", "hadd", "abs_diff"])
                out.append(f"{v} = {fn}({v}, (uint4)({self.uint_expr(scope, 1)}));")
            elif roll == 3:
                out.append(f"{v} = select({v}, {v}.wzyx, {v} > (uint4)({self.uint_expr(scope, 1)}));")
            elif roll == 4:  # masks: -1 where a component's comparison holds
                other = rng.choice(scope.of("uint4"))
                op = rng.choice(["<", "<=", "==", "!=", ">", ">="])
                out.append(f"{v} ^= as_uint4((({v} {op} {other}.yzwx) && ({other} != "
                           f"(uint4)({self.uint_expr(scope, 1)}))) || !{v}) & {other};")
            elif roll == 5:  # a vector condition, and any/all of one
                other = rng.choice(scope.of("uint4"))
                out.append(f"{v} = ({other} > {v}.wxyz) ? {v} + (uint4)(any({v} < {other})) "
                           f": {v} - (uint4)(all({v} >= (uint4)({self.uint_expr(scope, 1)})));")
            else:
                w = self.fresh("v")
                out.append(f"int2 {w} = as_int2({v}.s{rng.randrange(4)}{rng.randrange(4)})"
                           f" ^ (int2)({self.int_expr(scope, 1)});")
                scope.add("int2", w)
        elif mode == "narrow":
            self.narrow_statement(scope, out)
        elif mode == "atomic":
            index = rng.randrange(len(ATOMIC_COUNTERS))
            op = ATOMIC_COUNTERS[index]
            if op == "add" and rng.random() < 0.3:
                out.append(f"atomic_inc(&acc[{index}]);")
            else:
                out.append(f"atomic_{op}(&acc[{index}], {self.uint_expr(scope, 2)});")
        elif mode == "struct":
            name = self.fresh("s")
            out.append(f"S {name} = {{ {self.uint_expr(scope, 1)}, {self.int_expr(scope, 1)}, "
                       f"(ushort)({self.uint_expr(scope, 1)}), "
                       f"(uint4)({self.uint_expr(scope, 1)}) }};")
            out.append(f"{name}.{rng.choice(['a', 'c'])} ^= {self.uint_expr(scope, 1)};")
            out.append(f"{name}.b = {self.int_expr(scope, 1)};")
            target = rng.choice(scope.writable("uint") or ["out[gid]"])
            out.append(f"{target} ^= mix_struct({name}, {self.uint_expr(scope, 1)});")
        elif mode == "pointer":
            array = self.fresh("arr")
            pointer = self.fresh("p")
            out.append(f"uint {array}[{_ARRAY}];")
            out.append(f"for (uint k = 0; k < {_ARRAY}u; k++) {array}[k] = in[(gid + k) % n] ^ k;")
            out.append(f"__private uint *{pointer} = {array} + ({self.uint_expr(scope, 1)} & 3u);")
            out.append(f"{pointer}[{self.uint_expr(scope, 1)} & 3u] += {self.uint_expr(scope, 2)};")
            target = rng.choice(scope.writable("uint") or ["out[gid]"])
            out.append(f"{target} ^= {array}[{self.uint_expr(scope, 1)} & {_ARRAY - 1}u]"
                       f" + *({pointer} + 1);")
        else:
            out.append(self.assign(scope, 3))

    # ------------------------------------------------------------ the kernel

    def program(self, seed: int) -> FuzzProgram:
        rng = self.rng
        local = rng.choice([1, 2, 4, 8, 16, 32, 64])
        groups = rng.randint(1, 8)
        if self.mode == "struct":
            self.head += [
                "typedef struct { uint a; int b; ushort c; uint4 v; } S;",
                "uint mix_struct(S s, uint k)",
                "{",
                "    return (s.a * 2654435761u) ^ as_uint(s.b) ^ ((uint)s.c << 3) ^ s.v.y ^ k;",
                "}",
            ]
        scope = _Scope()
        body = self.body
        body.append("const uint gid = get_global_id(0);")
        body.append("const uint lid = get_local_id(0);")
        scope.add("uint", "gid")
        scope.add("uint", "lid")
        scope.frozen |= {"gid", "lid"}
        if self.mode == "barrier":
            body.append(f"__local uint lmem[{local}];")
        body.append("out[gid] = 0u;")
        for index in range(rng.randint(2, 4)):
            name = self.fresh("v")
            body.append(f"uint {name} = in[(gid + {index}u) % n];")
            scope.add("uint", name)
            self.all_vars.append(("uint", name))
        for type_name in rng.sample(_SCALARS, 3):
            body.append(self.declare(scope, type_name, True))
        if self.mode == "vector":
            body.append(self.declare(scope, "uint4", True))
        if self.mode == "narrow":
            body.extend(self.declare(scope, t, True) for t in _NARROW)
        self.block(scope, 3, rng.randint(6, 14), body, True)
        hashed = []
        for type_name, name in self.all_vars:
            if type_name == "uint4":
                hashed.append(f"({name}.x ^ {name}.y * 3u ^ {name}.z * 5u ^ {name}.w * 7u)")
            elif type_name in _NARROW:
                hashed.append(f"((uint){name}.x ^ (uint){name}.y * 3u ^ (uint){name}.z * 5u"
                              f" ^ (uint){name}.w * 7u)")
            elif type_name == "ulong":
                hashed.append(f"(uint)({name} ^ ({name} >> 32))")
            elif type_name == "int":
                hashed.append(f"as_uint({name})")
            else:
                hashed.append(f"(uint){name}")
        digest = " + ".join(f"{h} * {2 * k + 1}u" for k, h in enumerate(hashed)) or "0u"
        body.append(f"out[gid] ^= {digest};")
        body[:] = ["    " + line for line in body]
        return FuzzProgram(seed, self.mode, tuple(self.head), tuple(body),
                           local * groups, local)


def generate(seed: int, mode: str | None = None) -> FuzzProgram:
    """The program of ``seed``; its mode is ``mode`` or one the seed picks."""
    if mode is None:
        mode = MODES[seed % len(MODES)]
    if mode not in MODES:
        raise ValueError(f"unknown fuzz mode {mode!r}; the modes are {', '.join(MODES)}")
    return _Generator(seed, mode).program(seed)
