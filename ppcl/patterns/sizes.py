"""Symbolic array sizes: polynomials in named sizes with rational coefficients.

Lift's array types carry their length as an arithmetic expression over size variables
(``N``, ``N / 4``, ``(N - 3) / 1 + 1``); two types agree when their lengths do. A ``Size`` is
kept in a normal form (a sum of monomials, each a rational coefficient times a product of
variables with integer powers), so ``(N / 4) * 4`` and ``N`` compare equal and a split of a
length that is not a multiple of the chunk is caught where it is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

Monomial = tuple[tuple[str, int], ...]  # sorted (variable, power) pairs, powers non-zero


def _mul_monomials(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted((n, p) for n, p in powers.items() if p != 0))


@dataclass(frozen=True)
class Size:
    """A length: ``terms`` maps monomials to non-zero coefficients (sorted, for equality)."""

    terms: tuple[tuple[Monomial, Fraction], ...]

    @staticmethod
    def of(value: int | str | Size) -> Size:
        if isinstance(value, Size):
            return value
        if isinstance(value, bool):
            raise TypeError("a size is an int, a name or a Size, not a bool")
        if isinstance(value, int):
            return Size((((), Fraction(value)),) if value else ())
        if isinstance(value, str) and value.isidentifier():
            return Size(((((value, 1),), Fraction(1)),))
        raise TypeError(f"a size is an int, a name or a Size, not {value!r}")

    @staticmethod
    def _build(terms: dict[Monomial, Fraction]) -> Size:
        return Size(tuple(sorted((m, c) for m, c in terms.items() if c != 0)))

    def __add__(self, other: int | str | Size) -> Size:
        terms = dict(self.terms)
        for m, c in Size.of(other).terms:
            terms[m] = terms.get(m, Fraction(0)) + c
        return Size._build(terms)

    def __radd__(self, other: int | str) -> Size:
        return self + other

    def __neg__(self) -> Size:
        return Size(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: int | str | Size) -> Size:
        return self + -Size.of(other)

    def __mul__(self, other: int | str | Size) -> Size:
        terms: dict[Monomial, Fraction] = {}
        for ma, ca in self.terms:
            for mb, cb in Size.of(other).terms:
                m = _mul_monomials(ma, mb)
                terms[m] = terms.get(m, Fraction(0)) + ca * cb
        return Size._build(terms)

    def __rmul__(self, other: int | str) -> Size:
        return self * other

    def __truediv__(self, other: int | str | Size) -> Size:
        """Division by a constant or a single monomial (what split and slide need)."""
        divisor = Size.of(other)
        if len(divisor.terms) != 1:
            raise ValueError(f"cannot divide the size {self} by {divisor}: not a monomial")
        (m, c), = divisor.terms
        inverse = tuple((name, -power) for name, power in m)
        return self * Size(((inverse, 1 / c),))

    @property
    def constant(self) -> int | None:
        """The value when the size names no variable and is a whole number."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == () and self.terms[0][1].denominator == 1:
            return int(self.terms[0][1])
        return None

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(name for m, _ in self.terms for name, _ in m)

    def evaluate(self, bindings: dict[str, int]) -> int:
        """The length for concrete values of the variables; it must be a whole number."""
        missing = self.variables - set(bindings)
        if missing:
            raise ValueError(f"size {self} needs values for {', '.join(sorted(missing))}")
        total = Fraction(0)
        for m, c in self.terms:
            value = Fraction(c)
            for name, power in m:
                value *= Fraction(bindings[name]) ** power
            total += value
        if total.denominator != 1:
            raise ValueError(f"size {self} is {total} for {bindings}, not a whole number")
        return int(total)

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in self.terms:
            num = [n if p == 1 else f"{n}^{p}" for n, p in m if p > 0]
            den = [n if p == -1 else f"{n}^{-p}" for n, p in m if p < 0]
            coef = c.numerator if not num or abs(c.numerator) != 1 else ("-" if c < 0 else "")
            text = "*".join(([str(coef)] if coef not in ("", "-") else []) + num) or "1"
            if coef == "-":
                text = "-" + text
            if c.denominator != 1 or den:
                text += "/" + "*".join(([str(c.denominator)] if c.denominator != 1 else []) + den)
            parts.append(text)
        return " + ".join(parts).replace("+ -", "- ")


def size(value: int | str | Size) -> Size:
    """``size("N")``, ``size(1024)``: the DSL's spelling of a length."""
    return Size.of(value)
