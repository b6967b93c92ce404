"""fastpool as the pooling backend of an ONNX runtime (needs the ``onnx`` extra).

- :func:`reference_ops` gives operator classes for ``onnx.reference.ReferenceEvaluator``:
  MaxPool, GlobalMaxPool and GlobalLpPool of the default domain, and the channels-last
  MaxPool of the ``com.ms.internal.nhwc`` domain (with its fused activation).
- :func:`run_node` runs one ``NodeProto``, checked against the operator version in force at
  the given opset.

onnx is imported on first use, so importing this module never fails; using it without onnx
raises an ImportError that names the extra to install.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from fastpool._api import global_lp_pool, global_max_pool, max_pool

NHWC_DOMAIN = "com.ms.internal.nhwc"

# The newest default-domain opset whose pooling operators this module knows.
LATEST_OPSET = 22


def _import_onnx():
    try:
        import onnx
    except ImportError as error:
        raise ImportError(
            "fastpool.onnx needs the onnx package: pip install 'fastpool[onnx]'"
        ) from error
    return onnx


class _Version(NamedTuple):
    """One version of an operator: what a node of it may hold."""

    since: int
    attributes: dict  # name -> AttributeProto type name ("INT", "INTS", "FLOAT", ...)
    outputs: int  # the most outputs
    dtypes: tuple  # input dtype names


_FLOATS = ("float16", "float32", "float64")
_MAX_POOL_1 = {"auto_pad": "STRING", "kernel_shape": "INTS", "pads": "INTS", "strides": "INTS"}
_MAX_POOL_8 = {**_MAX_POOL_1, "storage_order": "INT"}
_MAX_POOL_10 = {**_MAX_POOL_8, "dilations": "INTS", "ceil_mode": "INT"}
_NHWC_ATTRIBUTES = {**_MAX_POOL_10, "activation": "STRING", "activation_params": "FLOATS"}

# (domain, op_type) -> versions, oldest first.
VERSIONS: dict[tuple[str, str], list[_Version]] = {
    ("", "MaxPool"): [
        _Version(1, _MAX_POOL_1, 1, _FLOATS),
        _Version(8, _MAX_POOL_8, 2, _FLOATS),
        _Version(10, _MAX_POOL_10, 2, _FLOATS),
        _Version(11, _MAX_POOL_10, 2, _FLOATS),
        _Version(12, _MAX_POOL_10, 2, (*_FLOATS, "int8", "uint8")),
        _Version(22, _MAX_POOL_10, 2, (*_FLOATS, "int8", "uint8", "bfloat16")),
    ],
    ("", "GlobalMaxPool"): [
        _Version(1, {}, 1, _FLOATS),
        _Version(22, {}, 1, (*_FLOATS, "bfloat16")),
    ],
    ("", "GlobalLpPool"): [
        _Version(1, {"p": "FLOAT"}, 1, _FLOATS),
        _Version(2, {"p": "INT"}, 1, _FLOATS),
        _Version(22, {"p": "INT"}, 1, (*_FLOATS, "bfloat16")),
    ],
    (NHWC_DOMAIN, "MaxPool"): [
        _Version(11, _NHWC_ATTRIBUTES, 2, (*_FLOATS, "int8", "uint8")),
    ],
}


def _domain(node) -> str:
    return "" if node.domain in ("", "ai.onnx") else node.domain


def _version_in_force(domain: str, op_type: str, opset: int) -> _Version:
    versions = VERSIONS.get((domain, op_type))
    if versions is None:
        known = ", ".join(f"{d or 'ai.onnx'}:{t}" for d, t in VERSIONS)
        raise ValueError(
            f"fastpool has no operator {domain or 'ai.onnx'}:{op_type}; it has {known}"
        )
    in_force = [v for v in versions if v.since <= opset]
    if not in_force:
        raise ValueError(
            f"{op_type} of domain {domain or 'ai.onnx'!r} does not exist at opset {opset} "
            f"(it starts at opset {versions[0].since})"
        )
    return in_force[-1]


def _opset_for(domain: str, opset: int | Mapping[str, int]) -> int:
    """The opset of a node's domain: an int opset is the default domain's; a mapping is a
    model's opset imports. A domain it does not give runs its newest version."""
    if isinstance(opset, Mapping):
        version = opset.get(domain, opset.get("ai.onnx") if domain == "" else None)
    else:
        version = opset if domain == "" else None
    if version is None:
        if domain == "":
            raise ValueError("opset gives no version for the default domain ''")
        newest = [v.since for (d, _), versions in VERSIONS.items() if d == domain for v in versions]
        return max(newest, default=1)
    if isinstance(version, bool) or not isinstance(version, (int, np.integer)) or version < 1:
        raise ValueError(f"opset must be a positive integer, got {version!r}")
    return int(version)


def _attributes(node, version: _Version, opset: int, linked: Mapping[str, Any] | None) -> dict:
    """The node's attributes as Python values, checked against the version in force."""
    onnx = _import_onnx()
    name = f"{node.op_type}-{version.since} (opset {opset})"
    values = {}
    for attribute in node.attribute:
        expected = version.attributes.get(attribute.name)
        if expected is None:
            allowed = ", ".join(version.attributes) or "none"
            raise ValueError(
                f"{name} has no attribute {attribute.name!r}; its attributes: {allowed}"
            )
        actual = onnx.AttributeProto.AttributeType.Name(attribute.type)
        if attribute.ref_attr_name:  # inside a function: the caller's value
            if linked is None or attribute.name not in linked:
                raise ValueError(f"{name}: no value for linked attribute {attribute.name!r}")
            values[attribute.name] = linked[attribute.name]
            continue
        if actual != expected:
            raise ValueError(
                f"{name}: attribute {attribute.name!r} must be of type {expected}, got {actual}"
            )
        value = onnx.helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        values[attribute.name] = list(value) if expected.endswith("S") else value
    if node.op_type == "MaxPool" and "kernel_shape" not in values:
        raise ValueError(f"{name}: attribute 'kernel_shape' is required")
    return values


def _run(node, inputs: Sequence, opset, linked=None) -> list[np.ndarray]:
    domain = _domain(node)
    version_opset = _opset_for(domain, opset)
    version = _version_in_force(domain, node.op_type, version_opset)
    name = f"{node.op_type}-{version.since} (opset {version_opset})"
    if len(node.input) != 1 or len(inputs) != 1:
        raise ValueError(
            f"{name} takes one input, the node names {len(node.input)} and {len(inputs)} were given"
        )
    if not 1 <= len(node.output) <= version.outputs:
        raise ValueError(
            f"{name} has at most {version.outputs} output(s), the node names {len(node.output)}"
        )
    x = np.asarray(inputs[0])
    if x.dtype.name not in version.dtypes:
        raise TypeError(
            f"{name} does not support dtype {x.dtype}; supported: {', '.join(version.dtypes)}"
        )
    attrs = _attributes(node, version, version_opset, linked)
    if node.op_type == "GlobalMaxPool":
        return [global_max_pool(x)]
    if node.op_type == "GlobalLpPool":
        return [global_lp_pool(x, attrs.get("p", 2))]
    layout = "NHWC" if domain == NHWC_DOMAIN else "NCHW"
    kernel_shape = attrs.pop("kernel_shape")
    if len(node.output) == 2:
        return list(max_pool(x, kernel_shape, layout=layout, return_indices=True, **attrs))
    return [max_pool(x, kernel_shape, layout=layout, **attrs)]


def run_node(node, inputs: Sequence, opset: int | Mapping[str, int] = LATEST_OPSET) -> list:
    """Run one pooling node with fastpool.

    Parameters
    ----------
    node : onnx.NodeProto
        A MaxPool, GlobalMaxPool or GlobalLpPool node of the default domain, or a MaxPool
        of the ``com.ms.internal.nhwc`` domain (channels last).
    inputs : sequence of array_like
        The node's one input.
    opset : int or mapping of str to int
        The default domain's opset (an int), or a model's opsets by domain. The node is
        checked against its operator's version in force there: MaxPool-1 has no Indices,
        storage_order, dilations or ceil_mode; -8 adds Indices and storage_order; -10
        dilations and ceil_mode; -12 int8 and uint8; -22 bfloat16. GlobalMaxPool-22 and
        GlobalLpPool-22 add bfloat16; GlobalLpPool-1 takes a float ``p``, -2 an int.

    Returns
    -------
    list of ndarray
        The node's outputs, in order.

    Raises
    ------
    ValueError
        For an unknown operator or domain, an operator not yet defined at the opset, an
        attribute the version does not have (or of the wrong type), a bad attribute value,
        or the wrong number of inputs or outputs. Messages name the version and opset.
    TypeError
        For a dtype the version does not support, or a node that is not a NodeProto.
    ImportError
        When onnx is not installed.
    """
    onnx = _import_onnx()
    if not isinstance(node, onnx.NodeProto):
        raise TypeError(f"node must be an onnx.NodeProto, got {type(node).__name__}")
    return _run(node, inputs, opset)


def reference_ops() -> list[type]:
    """Operator classes that make ``onnx.reference.ReferenceEvaluator`` pool with fastpool.

    Use as ``ReferenceEvaluator(model, new_ops=fastpool.onnx.reference_ops())``. Each node is
    checked against the model's opset like :func:`run_node`, and computed with the semantics
    of SEMANTICS.md (which fixes the reference's own wrong indices and shapes).
    """
    _import_onnx()
    from onnx.reference.op_run import OpRun

    def run(self, x, **kwargs):
        opsets = dict(self.run_params.get("opsets") or {})
        opsets.setdefault("", LATEST_OPSET)
        linked = kwargs if self.has_linked_attribute else None
        return tuple(_run(self.onnx_node, [x], opsets, linked))

    def run_and_name_the_error(self, *args, **kwargs):
        # OpRun.run replaces a TypeError of _run with a vague one of its own: raise ours
        try:
            return OpRun.run(self, *args, **kwargs)
        except TypeError as error:
            if isinstance(error.__cause__, TypeError):
                raise error.__cause__ from None
            raise

    def make(domain: str, op_type: str) -> type:
        doc = f"{op_type} of domain {domain or 'ai.onnx'!r}, run by fastpool."
        members = {"op_domain": domain, "_run": run, "run": run_and_name_the_error,
                   "__doc__": doc}  # fmt: skip
        return type(op_type, (OpRun,), members)

    return [make(domain, op_type) for domain, op_type in VERSIONS]
