"""Integer handles of runtime objects: PyOpenCL's ``int_ptr`` and ``from_int_ptr``.

PyOpenCL's ``int_ptr`` is the C-level pointer of an OpenCL object, which code passes to another
library and turns back into an object with ``Class.from_int_ptr``. ppcl's objects are Python
objects, so the integer is the object's identity, and a handle given out is remembered (weakly:
remembering keeps nothing alive) so that ``from_int_ptr`` finds the object while it lives."""

from __future__ import annotations

import weakref
from typing import Any, TypeVar

from ppcl.runtime.errors import make_error

_T = TypeVar("_T", bound="Handle")

_given_out: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


class Handle:
    """An object with an integer handle (``int_ptr``) that ``from_int_ptr`` turns back into
    the object, as PyOpenCL's wrapped OpenCL objects have."""

    __slots__ = ()

    @property
    def int_ptr(self) -> int:
        handle = id(self)
        _given_out[handle] = self
        return handle

    @classmethod
    def from_int_ptr(cls: type[_T], int_ptr_value: int, retain: bool = True) -> _T:
        """The live object whose ``int_ptr`` is ``int_ptr_value``. ``retain`` is accepted for
        PyOpenCL's signature: a Python reference keeps the object, there is no count to raise."""
        found = _given_out.get(int(int_ptr_value))
        if not isinstance(found, cls):
            what = "no live ppcl object" if found is None else f"a {type(found).__name__}"
            raise make_error(f"{cls.__name__}.from_int_ptr", "INVALID_VALUE",
                             f"{int_ptr_value} names {what}, not a {cls.__name__}: a handle is "
                             "an int_ptr this process's ppcl gave out, of an object still alive")
        return found
