"""The interpreter of the checking device: the typed IR, every lane of a batch at once.

Statements run under a mask of active lanes (SIMT): an ``if`` runs its branches under the
lanes that take them, a loop iterates while any lane stays in it, ``break``/``continue``/
``return`` take lanes out. Expressions are numpy operations over all lanes; memory accesses,
divisions and reads of uninitialized variables are checked only for the active lanes. A
barrier is where the mask must hold every lane of the group (else: barrier divergence), and
it starts a new barrier interval for the race shadows (``memory.py``).

Helper functions are called as such (not inlined), so findings point into them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    ArrayType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    scalar_of,
)
from ppcl.devices.check import memory as mem
from ppcl.devices.check import values as val
from ppcl.devices.check.access import MemoryAccess
from ppcl.devices.check.findings import FindingLog
from ppcl.devices.check.frames import Frame, Loop, memory_names
from ppcl.devices.check.lanes import Lanes
from ppcl.devices.check.values import Ptr, Unsupported


class Interpreter(MemoryAccess):
    """Runs one kernel over batches of lanes; ``regions`` and ``log`` outlive a batch."""

    def __init__(self, module: ir.Module, kernel: ir.Function, log: FindingLog,
                 regions: list[mem.Region | None], collect: bool,
                 builtins: dict[str, Callable[..., Any]]) -> None:
        super().__init__(kernel, log, regions)
        self.module = module
        self.collect = collect
        self.builtins = builtins
        self.functions = {f.name: f for f in module.functions}
        self._memory_names: dict[str, frozenset[str]] = {}
        self.globals: dict[str, int] = {}
        self.frame: Frame
        self.group_locals: dict[str, int] = {}
        self.frames: list[Frame] = []

    # ------------------------------------------------------------------ findings

    def run_batch(self, lanes: Lanes, params: dict[str, Any], local_regions: list[int]) -> None:
        self.lanes = lanes
        self.epochs = lanes.group_linear << mem.EPOCH_BITS
        self.intervals = np.zeros(lanes.count, np.int64)
        n = lanes.count
        frame = self._new_frame(self.kernel, n)
        self.frame = frame
        self.frames = []
        for p in self.kernel.params:
            value = params[p.name]
            if p.name in frame.memory:
                self.declare(ir.VarDecl(p.name, p.type, loc=p.loc), lanes.all)
                self.store(Ptr(frame.memory[p.name], np.zeros(n, np.int64)), p.type, value,
                           lanes.all, p.loc)
            else:
                frame.vars[p.name] = value
        self.exec_block(self.kernel.body.stmts if self.kernel.body else (), lanes.all)
        self._end_frame(frame)
        del local_regions

    def _new_frame(self, function: ir.Function, n: int) -> Frame:
        names = self._memory_names.get(function.name)
        if names is None:
            names = memory_names(function)
            self._memory_names[function.name] = names
        return Frame(function, {}, {name: -1 for name in names}, {},
                     np.zeros(n, np.bool_))

    def _end_frame(self, frame: Frame) -> None:
        for rid in frame.regions:
            self.regions[rid] = None

    # ------------------------------------------------------------------ statements

    def exits(self) -> np.ndarray | None:
        frame = self.frame
        out = frame.returned if frame.returned.any() else None
        for loop in frame.loops:
            for m in (loop.broken, loop.continued):
                if m.any():
                    out = m if out is None else out | m
        return out

    def exec_block(self, stmts: tuple[ir.Stmt, ...], mask: np.ndarray) -> None:
        for s in stmts:
            gone = self.exits()
            if gone is not None:
                mask = mask & ~gone
                if not mask.any():
                    return
            self.exec(s, mask)

    def exec(self, s: ir.Stmt, mask: np.ndarray) -> None:
        if isinstance(s, ir.ExprStmt):
            self.eval(s.expr, mask)
        elif isinstance(s, ir.DeclStmt):
            for d in s.decls:
                self.declare(d, mask)
        elif isinstance(s, ir.Block):
            self.exec_block(s.stmts, mask)
        elif isinstance(s, ir.If):
            cond = val.truth(self.eval(s.cond, mask))
            then = mask & cond
            if then.any():
                self.exec(s.then, then)
            if s.otherwise is not None:
                other = mask & ~cond
                if other.any():
                    self.exec(s.otherwise, other)
        elif isinstance(s, ir.For):
            self.exec_loop(s.init, s.cond, s.step, s.body, mask, False)
        elif isinstance(s, ir.While):
            self.exec_loop(None, s.cond, None, s.body, mask, False)
        elif isinstance(s, ir.DoWhile):
            self.exec_loop(None, s.cond, None, s.body, mask, True)
        elif isinstance(s, ir.Return):
            self.exec_return(s, mask)
        elif isinstance(s, ir.Break):
            loop = self.frame.loops[-1]
            loop.broken = loop.broken | mask
        elif isinstance(s, ir.Continue):
            for loop in reversed(self.frame.loops):
                if not loop.is_switch:
                    loop.continued = loop.continued | mask
                    break
        elif isinstance(s, ir.Switch):
            self.exec_switch(s, mask)
        elif not isinstance(s, (ir.Empty, ir.Case, ir.Default)):
            raise Unsupported(f"{s.loc}: the statement '{type(s).__name__}'")

    def exec_return(self, s: ir.Return, mask: np.ndarray) -> None:
        frame = self.frame
        if s.value is not None:
            value = self.eval(s.value, mask)
            frame.ret = value if frame.ret is None else val.select(mask, value, frame.ret)
        frame.returned = frame.returned | mask

    def exec_loop(self, init: ir.Stmt | None, cond: ir.Expr | None, step: ir.Expr | None,
                  body: ir.Stmt, mask: np.ndarray, body_first: bool) -> None:
        frame = self.frame
        if init is not None:
            self.exec(init, mask)
        n = len(mask)
        loop = Loop(np.zeros(n, np.bool_), np.zeros(n, np.bool_))
        frame.loops.append(loop)
        running = mask.copy()
        first = True
        try:
            while True:
                running = running & ~(frame.returned | loop.broken)
                if cond is not None and not (body_first and first):
                    running = running & val.truth(self.eval(cond, running))
                first = False
                if not running.any():
                    return
                self.exec(body, running)
                loop.continued = np.zeros(n, np.bool_)
                running = running & ~(frame.returned | loop.broken)
                if step is not None and running.any():
                    self.eval(step, running)
        finally:
            frame.loops.pop()

    def exec_switch(self, s: ir.Switch, mask: np.ndarray) -> None:
        value = self.eval(s.expr, mask)
        cases = [c.value for c in s.body.stmts if isinstance(c, ir.Case)]
        matched_any = np.isin(value, cases)
        n = len(mask)
        loop = Loop(np.zeros(n, np.bool_), np.zeros(n, np.bool_), is_switch=True)
        self.frame.loops.append(loop)
        entered = np.zeros(n, np.bool_)
        try:
            for stmt in s.body.stmts:
                if isinstance(stmt, ir.Case):
                    entered = entered | (mask & (value == stmt.value))
                    continue
                if isinstance(stmt, ir.Default):
                    entered = entered | (mask & ~matched_any)
                    continue
                active = entered & ~loop.broken
                gone = self.exits()
                if gone is not None:
                    active = active & ~gone
                if active.any():
                    self.exec(stmt, active)
        finally:
            self.frame.loops.pop()

    def declare(self, d: ir.VarDecl, mask: np.ndarray) -> None:
        frame = self.frame
        n = len(mask)
        if d.space is not d.space.PRIVATE:
            if d.space.name == "LOCAL":
                rid = self.local_region(d)
                frame.memory[d.name] = rid
                frame.vars.pop(d.name, None)
                return
            raise Unsupported(f"{d.loc}: a {d.space.spelling} variable inside a function")
        if d.name in frame.memory:
            rid = frame.memory[d.name]
            size = d.type.size
            if rid < 0 or self.regions[rid] is None:
                data = np.zeros(n * size + 16, np.uint8)
                region = mem.Region(d.name, "private", data, 0, size,
                                    _element_size(d.type), copies=self.lanes.index,
                                    track_init=True)
                rid = self.add_region(region)
                frame.memory[d.name] = rid
                frame.regions.append(rid)
            else:
                kept = self.regions[rid]
                assert kept is not None and kept.init is not None
                lanes = np.nonzero(mask)[0]
                kept.init[mem.byte_span(lanes * size, size)] = False
            if d.init is not None:
                self.initialize(Ptr(rid, np.zeros(n, np.int64)), d.type, d.init, mask)
            return
        if d.init is None:
            frame.vars[d.name] = val.zeros(d.type, n)
            frame.uninit[d.name] = ~mask
            return
        value = self.eval(d.init, mask)
        old = frame.vars.get(d.name)
        frame.vars[d.name] = value if old is None else val.select(mask, value, old)
        if d.name in frame.uninit:
            self.set_initialized(d.name, mask)

    def initialize(self, ptr: Ptr, t: Type, init: ir.Expr, mask: np.ndarray) -> None:
        """Store an initializer (a brace list for arrays and structs) at ``ptr``; the parts
        a brace list leaves out are zero, as in C."""
        if isinstance(init, ir.InitList) and isinstance(t, (ArrayType, StructType)):
            self.store_zero(ptr, t, mask)
            if isinstance(t, ArrayType):
                for i, e in enumerate(init.elems):
                    self.initialize(Ptr(ptr.region, ptr.offset + i * t.elem.size), t.elem, e,
                                    mask)
                return
            offsets, _size, _align = t.layout()
            for f, off, e in zip(t.fields, offsets, init.elems):
                self.initialize(Ptr(ptr.region, ptr.offset + off), f.type, e, mask)
            return
        if isinstance(init, ir.InitList) and isinstance(t, VectorType):
            parts = [self.eval(e, mask) for e in init.elems]
            cols = [p[:, None] if p.ndim == 1 else p for p in parts]
            value = np.concatenate(cols, axis=1)[:, :t.width].astype(val.dtype_of(t))
            self.store(ptr, t, value, mask, init.loc)
            return
        if isinstance(init, ir.StringLit) and isinstance(t, ArrayType):
            text = init.value.encode("latin-1").decode("unicode_escape").encode("latin-1")
            raw = np.zeros((len(mask), t.size), np.uint8)
            raw[:, :min(len(text), t.size)] = np.frombuffer(text, np.uint8)[:t.size]
            self.store_raw(ptr, t.size, raw, mask, None)
            return
        if isinstance(init, ir.InitList):
            init = init.elems[0]
        self.store(ptr, t, self.eval(init, mask), mask, init.loc)

    def set_initialized(self, name: str, mask: np.ndarray) -> None:
        done = self.frame.uninit[name] | mask
        if done.all():
            del self.frame.uninit[name]
        else:
            self.frame.uninit[name] = done

    def local_region(self, d: ir.VarDecl) -> int:
        """The ``__local`` variable ``d`` of the current group (made at its first use)."""
        rid = self.group_locals.get(d.name)
        if rid is None or self.regions[rid] is None:
            size = d.type.size
            region = local_object(d.name, size, _element_size(d.type), self.lanes)
            rid = self.add_region(region)
            self.group_locals[d.name] = rid
        return rid

    def eval(self, e: ir.Expr, mask: np.ndarray) -> Any:
        method = _EVAL.get(type(e))
        if method is None:
            raise Unsupported(f"{e.loc}: the expression '{type(e).__name__}'")
        return method(self, e, mask)

    def eval_int_lit(self, e: ir.IntLit, mask: np.ndarray) -> Any:
        if isinstance(e.type, PointerType):
            return Ptr(-1, np.zeros(len(mask), np.int64))
        dtype = val.dtype_of(e.type)
        value = e.value & ((1 << (dtype.itemsize * 8)) - 1) if dtype.kind == "u" else e.value
        return np.full(len(mask), value, dtype)

    def eval_float_lit(self, e: ir.FloatLit, mask: np.ndarray) -> Any:
        return np.full(len(mask), e.value, val.dtype_of(e.type))

    def eval_sizeof(self, e: ir.SizeOf | ir.VecStep, mask: np.ndarray) -> Any:
        return np.full(len(mask), e.value, val.dtype_of(e.type))

    def eval_var(self, e: ir.VarRef, mask: np.ndarray) -> Any:
        frame = self.frame
        if e.name in frame.memory or e.name in self.globals:
            ptr = self.address(e, mask)
            if isinstance(e.type, ArrayType):
                return ptr
            return self.load(ptr, e.type, mask, e.loc)
        value = frame.vars.get(e.name)
        if value is None:
            raise Unsupported(f"{e.loc}: the variable '{e.name}'")
        unset = frame.uninit.get(e.name)
        if unset is not None:
            bad = mask & ~unset
            if bad.any():
                lane = int(np.argmax(bad))
                self.report("uninitialized-read", e.loc, lane,
                            f"read of private variable '{e.name}' before any value was "
                            "stored in it", name=e.name)
        return value

    def eval_cast(self, e: ir.Cast, mask: np.ndarray) -> Any:
        value = self.eval(e.operand, mask)
        src = e.operand.type
        if isinstance(e.type, PointerType):
            if isinstance(value, Ptr):
                return value
            if isinstance(value, np.ndarray) and not value.any():
                return Ptr(-1, np.zeros(len(mask), np.int64))
            raise Unsupported(f"{e.loc}: a cast of an integer to a pointer")
        if isinstance(value, Ptr):
            if isinstance(e.type, ScalarType) and e.type.is_bool:
                return val.truth(value)
            raise Unsupported(f"{e.loc}: a cast of a pointer to '{e.type}'")
        if isinstance(e.type, StructType) or e.type == src:
            return value
        if scalar_of(e.type) is None:
            if str(e.type) == "void":
                return value
            raise Unsupported(f"{e.loc}: a cast to '{e.type}'")
        return val.convert(value, src, e.type)

    def eval_index(self, e: ir.Index, mask: np.ndarray) -> Any:
        ptr = self.address(e, mask)
        if isinstance(e.type, ArrayType):
            return ptr
        return self.load(ptr, e.type, mask, e.loc)

    def eval_member(self, e: ir.Member, mask: np.ndarray) -> Any:
        if not e.arrow and not _is_lvalue(e.base):
            raw = self.eval(e.base, mask)
            struct = e.base.type
            assert isinstance(struct, StructType)
            offsets, _, _ = struct.layout()
            index = [f.name for f in struct.fields].index(e.field_name)
            off = offsets[index]
            part = np.ascontiguousarray(raw[:, off:off + e.type.size])
            return _from_raw(part, e.type)
        ptr = self.address(e, mask)
        if isinstance(e.type, ArrayType):
            return ptr
        return self.load(ptr, e.type, mask, e.loc, _member_align(e))

    def eval_swizzle(self, e: ir.Swizzle, mask: np.ndarray, base: Any = None) -> Any:
        if base is None:
            if isinstance(e.base.type, VectorType) and _is_memory(self, e.base):
                return self.load_components(e, mask)
            base = self.eval(e.base, mask)
        if base.ndim == 1:
            base = base[:, None]
        if max(e.indices) >= base.shape[1]:
            # .hi/.odd of a 3-vector name its undefined w component: read as 0, as on the CPU
            base = np.pad(base, ((0, 0), (0, max(e.indices) + 1 - base.shape[1])))
        if len(e.indices) == 1:
            return base[:, e.indices[0]].copy()
        return base[:, list(e.indices)]

    def load_components(self, e: ir.Swizzle, mask: np.ndarray) -> Any:
        """The components ``e`` names of a vector in memory, each loaded on its own: reading
        ``v[i].x`` reads the bytes of x only, so components other work-items write, or no one
        wrote, are neither races nor uninitialized reads."""
        base = self.address(e.base, mask)
        vector = e.base.type
        assert isinstance(vector, VectorType)
        elem = vector.elem
        columns = []
        for index in e.indices:
            if index >= vector.width:
                # .hi/.odd of a 3-vector name its undefined w component: read as 0, as on the CPU
                columns.append(np.zeros(len(mask), val.dtype_of(elem)))
                continue
            ptr = Ptr(base.region, base.offset + index * elem.size)
            columns.append(self.load(ptr, elem, mask, e.loc))
        if len(columns) == 1:
            return columns[0]
        return np.stack(columns, axis=1)

    def eval_vector_literal(self, e: ir.VectorLiteral, mask: np.ndarray) -> Any:
        assert isinstance(e.type, VectorType)
        parts = [self.eval(x, mask) for x in e.elems]
        dtype = val.dtype_of(e.type)
        if len(parts) == 1 and parts[0].ndim == 1:
            return np.repeat(parts[0].astype(dtype)[:, None], e.type.width, axis=1)
        cols = [p[:, None] if p.ndim == 1 else p for p in parts]
        return np.concatenate(cols, axis=1).astype(dtype)

    def eval_comma(self, e: ir.Comma, mask: np.ndarray) -> Any:
        value = None
        for x in e.exprs:
            value = self.eval(x, mask)
        return value

    def eval_conditional(self, e: ir.Conditional, mask: np.ndarray) -> Any:
        cond_value = self.eval(e.cond, mask)
        if isinstance(e.cond.type, VectorType):  # select per component
            then = self.eval(e.then, mask)
            other = self.eval(e.otherwise, mask)
            return np.where(cond_value < 0 if cond_value.dtype.kind == "i" else cond_value != 0,
                            then, other)
        cond = val.truth(cond_value)
        then_mask = mask & cond
        other_mask = mask & ~cond
        then = self.eval(e.then, then_mask) if then_mask.any() else None
        other = self.eval(e.otherwise, other_mask) if other_mask.any() or then is None else None
        if then is None:
            return other
        if other is None:
            return then
        if isinstance(then, Ptr) or isinstance(other, Ptr):
            return val.select(cond, then, other)
        return val.select(cond, then, other)

    # ------------------------------------------------------------------ addresses

    def address(self, e: ir.Expr, mask: np.ndarray) -> Ptr:
        """The address of an lvalue in memory."""
        n = len(mask)
        if isinstance(e, ir.VarRef):
            rid = self.frame.memory.get(e.name)
            if rid is None:
                rid = self.globals.get(e.name)
            if rid is None or rid < 0:
                raise Unsupported(f"{e.loc}: the address of '{e.name}'")
            return Ptr(rid, np.zeros(n, np.int64))
        if isinstance(e, ir.Index):
            base = self.eval(e.base, mask)
            if not isinstance(base, Ptr):
                raise Unsupported(f"{e.loc}: indexing a value of type '{e.base.type}'")
            index = self.eval(e.index, mask).astype(np.int64)
            return Ptr(base.region, base.offset + index * _stride(e.type))
        if isinstance(e, ir.Member):
            if e.arrow:
                base = self.eval(e.base, mask)
                struct = e.base.type.pointee  # type: ignore[attr-defined]
            else:
                base = self.address(e.base, mask)
                struct = e.base.type
            assert isinstance(struct, StructType)
            offsets, _, _ = struct.layout()
            index = [f.name for f in struct.fields].index(e.field_name)
            return Ptr(base.region, base.offset + offsets[index])
        if isinstance(e, ir.Unary) and e.op == "*":
            value = self.eval(e.operand, mask)
            if not isinstance(value, Ptr):
                raise Unsupported(f"{e.loc}: dereferencing a value of type '{e.operand.type}'")
            return value
        if isinstance(e, ir.Swizzle) and len(e.indices) == 1 and _is_lvalue(e.base):
            base = self.address(e.base, mask)
            elem = scalar_of(e.base.type)
            assert elem is not None
            return Ptr(base.region, base.offset + e.indices[0] * elem.size)
        if isinstance(e, ir.Cast) and isinstance(e.type, PointerType):
            return self.address(e.operand, mask)
        raise Unsupported(f"{e.loc}: the address of a '{type(e).__name__}' expression")

    # ------------------------------------------------------------------ memory access

    def assign(self, target: ir.Expr, value: Any, mask: np.ndarray) -> None:
        frame = self.frame
        if isinstance(target, ir.VarRef) and target.name not in frame.memory \
                and target.name not in self.globals:
            old = frame.vars.get(target.name)
            if old is None or mask is self.lanes.all or mask.all():
                frame.vars[target.name] = value
            else:
                frame.vars[target.name] = val.select(mask, value, old)
            if target.name in frame.uninit:
                self.set_initialized(target.name, mask)
            return
        if isinstance(target, ir.Swizzle) and not _is_memory(self, target):
            old = self.kept_components(target.base, mask).copy()
            columns = value[:, None] if value.ndim == 1 else value
            # a 3-vector has no w: the part of a .hi/.odd store that lands there is dropped
            kept = [k for k, index in enumerate(target.indices) if index < old.shape[1]]
            old[:, [target.indices[k] for k in kept]] = columns[:, kept]
            self.assign(target.base, old, mask)
            return
        ptr = self.address(target, mask)
        align = _member_align(target) if isinstance(target, ir.Member) else None
        self.store(ptr, target.type, value, mask, target.loc, align)

    def kept_components(self, base: ir.Expr, mask: np.ndarray) -> Any:
        """The value of the private vector a component store writes into, components it
        keeps included. Not a read of the vector: writing ``v.x`` of a vector declared
        without a value is how such a vector is filled in, so no uninitialized-read is
        reported for the components still unset."""
        if isinstance(base, ir.VarRef) and base.name in self.frame.vars:
            return self.frame.vars[base.name]
        if isinstance(base, ir.Swizzle):
            whole = self.kept_components(base.base, mask)
            return self.eval_swizzle(base, mask, whole)
        return self.eval(base, mask)

    def eval_assign(self, e: ir.Assign, mask: np.ndarray) -> Any:
        if e.op == "=":
            value = self.eval(e.value, mask)
            self.assign(e.target, value, mask)
            return value
        op = e.op[:-1]
        if _is_memory(self, e.target):
            ptr = self.address(e.target, mask)
            old = self.load(ptr, e.target.type, mask, e.target.loc)
            rhs = self.eval(e.value, mask)
            value = self.arith(op, old, rhs, e.target.type, e.value.type, mask, e.loc)
            self.store(ptr, e.target.type, value, mask, e.target.loc)
            return value
        old = self.eval(e.target, mask)
        rhs = self.eval(e.value, mask)
        value = self.arith(op, old, rhs, e.target.type, e.value.type, mask, e.loc)
        self.assign(e.target, value, mask)
        return value

    # ------------------------------------------------------------------ operators

    def eval_unary(self, e: ir.Unary, mask: np.ndarray) -> Any:
        op = e.op
        if op == "&":
            return self.address(e.operand, mask)
        if op == "*":
            ptr = self.eval(e.operand, mask)
            if isinstance(e.type, ArrayType):
                return ptr
            return self.load(ptr, e.type, mask, e.loc)
        if op in ("++", "--", "p++", "p--"):
            target = e.operand
            memory = _is_memory(self, target)
            ptr = self.address(target, mask) if memory else None
            old = self.load(ptr, target.type, mask, target.loc) if ptr is not None \
                else self.eval(target, mask)
            one = np.ones(len(mask), np.int64)
            new = self.arith("+" if "+" in op else "-", old, one, target.type, target.type,
                             mask, e.loc)
            if ptr is not None:
                self.store(ptr, target.type, new, mask, target.loc)
            else:
                self.assign(target, new, mask)
            return old if op.startswith("p") else new
        value = self.eval(e.operand, mask)
        if op == "+":
            return value
        if op == "-":
            with np.errstate(all="ignore"):
                return (-value).astype(value.dtype)
        if op == "~":
            return ~value
        if op == "!":
            if isinstance(e.operand.type, VectorType):
                return val.vector_truth(value == 0, e.type)
            return val.vector_truth(~val.truth(value), e.type)
        raise Unsupported(f"{e.loc}: the operator '{op}'")

    def eval_binary(self, e: ir.Binary, mask: np.ndarray) -> Any:
        op = e.op
        if op in ("&&", "||"):
            lhs = self.eval(e.lhs, mask)
            if isinstance(e.type, VectorType):
                rhs = self.eval(e.rhs, mask)
                result = (lhs != 0) & (rhs != 0) if op == "&&" else (lhs != 0) | (rhs != 0)
                return val.vector_truth(result, e.type)
            left = val.truth(lhs)
            need = mask & (left if op == "&&" else ~left)
            right = val.truth(self.eval(e.rhs, need)) if need.any() else \
                np.zeros(len(mask), np.bool_)
            result = left & right if op == "&&" else left | right
            return val.vector_truth(result, e.type)
        lhs = self.eval(e.lhs, mask)
        rhs = self.eval(e.rhs, mask)
        if isinstance(lhs, Ptr) or isinstance(rhs, Ptr):
            return self.pointer_arith(e, lhs, rhs)
        if op in ("<", ">", "<=", ">=", "==", "!="):
            if lhs.ndim != rhs.ndim:
                lhs, rhs = _align(lhs), _align(rhs)
            with np.errstate(all="ignore"):
                result = _COMPARE[op](lhs, rhs)
            return val.vector_truth(result, e.type)
        return self.arith(op, lhs, rhs, e.type, e.rhs.type, mask, e.loc)

    def arith(self, op: str, lhs: np.ndarray, rhs: np.ndarray, t: Type, rhs_type: Type,
              mask: np.ndarray, loc: Loc) -> np.ndarray:
        if isinstance(lhs, Ptr):
            ptr_step = _stride(t.pointee) if isinstance(t, PointerType) else 1
            delta = rhs.astype(np.int64) * ptr_step
            return Ptr(lhs.region, lhs.offset + delta if op == "+" else lhs.offset - delta)
        dtype = val.dtype_of(t)
        if op in ("<<", ">>"):
            lhs = lhs.astype(dtype, copy=False)
            count = val.shift_count(rhs, t)
            if count.ndim < lhs.ndim:
                count = count[:, None]
            with np.errstate(all="ignore"):
                result = lhs << count if op == "<<" else lhs >> count
            return result.astype(dtype, copy=False)
        if lhs.dtype != dtype:
            lhs = val.convert(lhs, _type_of_dtype(lhs), t)
        if rhs.dtype != dtype:
            rhs = val.convert(rhs, _type_of_dtype(rhs), t)
        if lhs.ndim != rhs.ndim:
            lhs, rhs = _align(lhs), _align(rhs)
        if op in ("/", "%") and dtype.kind in "iu":
            zero = rhs == 0
            active = mask[:, None] if zero.ndim == 2 else mask
            bad = zero & active
            if bad.any():
                lane = int(np.argmax(bad.any(axis=1) if bad.ndim == 2 else bad))
                self.report("division-by-zero", loc, lane,
                            f"integer {'division' if op == '/' else 'remainder'} by zero")
            if zero.any():
                rhs = np.where(zero, np.ones_like(rhs), rhs)
            return val.int_divide(lhs, rhs, op == "%")
        with np.errstate(all="ignore"):
            if op == "%":
                result = np.fmod(lhs, rhs)
            else:
                result = _ARITH[op](lhs, rhs)
        return result.astype(dtype, copy=False)

    def pointer_arith(self, e: ir.Binary, lhs: Any, rhs: Any) -> Any:
        op = e.op
        if isinstance(lhs, Ptr) and isinstance(rhs, Ptr):
            if op == "-":
                step = _stride(e.lhs.type.pointee)  # type: ignore[attr-defined]
                return ((lhs.offset - rhs.offset) // step).astype(val.dtype_of(e.type))
            same_region = np.asarray(lhs.region) == np.asarray(rhs.region)
            result = _COMPARE[op](lhs.offset, rhs.offset)
            if op == "==":
                result = result & same_region
            elif op == "!=":
                result = result | ~same_region
            return val.vector_truth(np.broadcast_to(result, lhs.offset.shape), e.type)
        if op in ("==", "!="):  # comparison with NULL
            ptr = lhs if isinstance(lhs, Ptr) else rhs
            is_null = ~val.truth(ptr)
            return val.vector_truth(is_null if op == "==" else ~is_null, e.type)
        if isinstance(rhs, Ptr):
            lhs, rhs = rhs, lhs
        step = _stride(lhs_type_pointee(e))
        delta = rhs.astype(np.int64) * step
        return Ptr(lhs.region, lhs.offset + delta if op == "+" else lhs.offset - delta)

    # ------------------------------------------------------------------ calls

    def eval_call(self, e: ir.Call, mask: np.ndarray) -> Any:
        if e.builtin is not None:
            impl = self.builtins.get(e.name)
            if impl is None:
                raise Unsupported(f"{e.loc}: the builtin '{e.name}'")
            return impl(self, e, mask)
        function = self.functions.get(e.name)
        if function is None or function.body is None:
            raise Unsupported(f"{e.loc}: a call of '{e.name}', which has no body")
        args = [self.eval(a, mask) for a in e.args]
        caller = self.frame
        frame = self._new_frame(function, len(mask))
        self.frames.append(caller)
        self.frame = frame
        try:
            for p, value in zip(function.params, args):
                if p.name in frame.memory:
                    decl = ir.VarDecl(p.name, p.type, loc=p.loc)
                    self.declare(decl, mask)
                    rid = frame.memory[p.name]
                    self.store(Ptr(rid, np.zeros(len(mask), np.int64)), p.type, value, mask,
                               p.loc)
                else:
                    frame.vars[p.name] = value
            self.exec_block(function.body.stmts, mask)
        finally:
            self.frames.pop()
            self.frame = caller
            self._end_frame(frame)
        return frame.ret

    def barrier(self, loc: Loc, mask: np.ndarray) -> None:
        """A work-group barrier reached by the lanes of ``mask``: in each group of the batch,
        every lane or none must be there; then the groups there start a new interval."""
        lanes = self.lanes
        arrived = np.bincount(lanes.slot[mask], minlength=lanes.groups)
        partial = (arrived > 0) & (arrived < lanes.per_group)
        if partial.any():
            missing = ~mask & partial[lanes.slot]
            lane = int(np.argmax(missing))
            returned = self._returned_anywhere()
            why = "returned before it" if returned[lane] else \
                "did not reach this barrier (divergent control flow)"
            count = int(arrived[lanes.slot[lane]])
            self.report("barrier-divergence", loc, lane,
                        f"{count} of {lanes.per_group} work-items of the group reached "
                        f"this barrier; this work-item {why}")
        self.intervals = self.intervals + mask

    def _returned_anywhere(self) -> np.ndarray:
        returned = self.frame.returned.copy()
        for frame in self.frames:
            returned |= frame.returned
        return returned


def local_object(name: str, size: int, element_size: int, lanes: Lanes) -> mem.Region:
    """A ``__local`` object of ``size`` bytes, one copy per group of the batch, with its
    initialization bits and race shadow."""
    total = size * lanes.groups + 16
    return mem.Region(name, "local", np.zeros(total, np.uint8), 0, size, element_size,
                      copies=lanes.slot, track_init=True,
                      shadow=mem.Shadow(total, element_size))


def lhs_type_pointee(e: ir.Binary) -> Type:
    t = e.lhs.type if isinstance(e.lhs.type, PointerType) else e.rhs.type
    if isinstance(t, PointerType):
        return t.pointee
    if isinstance(t, ArrayType):
        return t.elem
    raise Unsupported(f"{e.loc}: pointer arithmetic on '{t}'")


def _stride(t: Type) -> int:
    if isinstance(t, ArrayType):
        return t.size
    return t.size


def _element_size(t: Type) -> int:
    while isinstance(t, ArrayType):
        t = t.elem
    elem = scalar_of(t)
    return elem.size if elem is not None else 1


def _member_align(e: ir.Member) -> int | None:
    """The alignment a member access needs: 1 in a packed struct (C compilers load such
    members piecewise), else that of its type."""
    struct = e.base.type.pointee if e.arrow else e.base.type  # type: ignore[attr-defined]
    if isinstance(struct, StructType) and struct.packed:
        return 1
    return None


def _is_lvalue(e: ir.Expr) -> bool:
    if isinstance(e, ir.VarRef):
        return True
    if isinstance(e, (ir.Index, ir.Member)):
        return True
    if isinstance(e, ir.Unary) and e.op == "*":
        return True
    if isinstance(e, ir.Swizzle):
        return _is_lvalue(e.base)
    return False


def _is_memory(interp: Interpreter, e: ir.Expr) -> bool:
    if isinstance(e, ir.VarRef):
        return e.name in interp.frame.memory or e.name in interp.globals
    if isinstance(e, ir.Swizzle):
        return len(e.indices) == 1 and _is_memory(interp, e.base)
    return isinstance(e, (ir.Index, ir.Member)) or (isinstance(e, ir.Unary) and e.op == "*")


def _from_raw(raw: np.ndarray, t: Type) -> Any:
    if isinstance(t, StructType) or isinstance(t, ArrayType):
        return raw
    dtype = val.dtype_of(t)
    values = raw.view(dtype)
    if isinstance(t, VectorType):
        return values[:, :t.width]
    return values.reshape(len(raw))


def _align(a: np.ndarray) -> np.ndarray:
    return a[:, None] if a.ndim == 1 else a


_DTYPE_TYPES = {v: ScalarType(k) for k, v in val.DTYPES.items()}


def _type_of_dtype(a: np.ndarray) -> ScalarType:
    return _DTYPE_TYPES[a.dtype]


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}
_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
}

_EVAL: dict[type, Callable[[Interpreter, Any, np.ndarray], Any]] = {
    ir.IntLit: Interpreter.eval_int_lit,
    ir.FloatLit: Interpreter.eval_float_lit,
    ir.SizeOf: Interpreter.eval_sizeof,
    ir.VecStep: Interpreter.eval_sizeof,
    ir.VarRef: Interpreter.eval_var,
    ir.Cast: Interpreter.eval_cast,
    ir.Index: Interpreter.eval_index,
    ir.Member: Interpreter.eval_member,
    ir.Swizzle: Interpreter.eval_swizzle,
    ir.VectorLiteral: Interpreter.eval_vector_literal,
    ir.Comma: Interpreter.eval_comma,
    ir.Conditional: Interpreter.eval_conditional,
    ir.Assign: Interpreter.eval_assign,
    ir.Unary: Interpreter.eval_unary,
    ir.Binary: Interpreter.eval_binary,
    ir.Call: Interpreter.eval_call,
}
