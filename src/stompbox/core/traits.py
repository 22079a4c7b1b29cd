"""Engine traits: what a plugin class tells the engine about itself, declared once and checked when the class is
defined.

A plugin declares its traits as class keywords, and a subclass inherits its base's traits and may change them::

    class Gain(Plugin, stateful=False, block_invariant=True, pointwise=True): ...
    class Delay(Plugin, block_invariant=True, whole_call=True): ...

The traits steer the paths through ``Plugin._run``, so a wrong one would change output silently; instead, a
contradictory set (a pointwise plugin that keeps state, a whole-call plugin that is not block-invariant, a plugin
that cuts blocks itself but claims block invariance) raises ``TypeError`` at the class statement. Which
parameters are automatable, and whether per sample, is declared on each :class:`~stompbox.core.params.Param`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["Traits", "declare"]


@dataclass(frozen=True)
class Traits:
    """The engine traits of a plugin class (read-only; ``cls.traits``).

    Attributes
    ----------
    stateful
        False for memoryless plugins, which need no recovery from non-finite input.
    block_invariant
        The output does not depend on how the audio is cut into blocks (every built-in effect: the test suite
        holds them to it). Such plugins are run in blocks of at least 131072 samples (all channels together)
        whatever ``buffer_size`` asks. A container computes it from its children (a property).
    whole_call
        A block-invariant plugin that keeps no block-sized working memory: a call is run as one block, in place
        in the output array (except while automated).
    chunks_itself
        The plugin cuts what it is given into blocks of ``_chunk`` samples itself (hosted plugins whose block
        loop runs in compiled code); it sees exactly the caller's ``buffer_size``.
    pointwise
        A memoryless plugin whose output sample depends on its input sample alone and that implements
        ``_map``: a call without automation runs as one pass from the caller's array into the output.
    automation_chunk
        The sub-block, in samples, at which automation of parameters that are not automated per sample is
        applied (through ``_update``), aligned to the stream clock.
    """

    stateful: bool = True
    block_invariant: bool = False
    whole_call: bool = False
    chunks_itself: bool = False
    pointwise: bool = False
    automation_chunk: int = 32

    def problems(self, dynamic_block_invariance: bool = False) -> list[str]:
        """The contradictions in this set (empty when it is consistent)."""
        found = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool) and not isinstance(value, bool):
                found.append(f"{field.name} must be True or False (got {value!r})")
        if not isinstance(self.automation_chunk, int) or isinstance(self.automation_chunk, bool):
            found.append(f"automation_chunk must be a whole number of samples (got {self.automation_chunk!r})")
        elif self.automation_chunk < 1:
            found.append(f"automation_chunk must be at least 1 (got {self.automation_chunk})")
        invariant = self.block_invariant or dynamic_block_invariance
        if self.pointwise and self.stateful:
            found.append("a pointwise plugin is memoryless: declare stateful=False")
        if self.pointwise and not invariant:
            found.append("a pointwise plugin is block-invariant: declare block_invariant=True")
        if self.whole_call and not invariant:
            found.append("whole_call needs block_invariant=True (a call is run as one block)")
        if self.chunks_itself and (self.block_invariant or self.whole_call or self.pointwise):
            found.append("a plugin that chunks itself sees exactly buffer_size: it cannot be block_invariant, "
                         "whole_call or pointwise")  # fmt: skip
        return found


#: the engine attribute each trait sets on the class (what ``Plugin._run`` reads)
ATTRIBUTES = {
    "stateful": "_stateful",
    "block_invariant": "_block_invariant",
    "whole_call": "_whole_call",
    "chunks_itself": "_chunks_itself",
    "pointwise": "_pointwise",
    "automation_chunk": "_automation_chunk",
}


def inherited(cls: type) -> Traits:
    """The traits ``cls`` inherits: each trait from the nearest class in its MRO that declared it (so a base
    that declares nothing, such as ``SidechainInput``, does not hide its siblings' traits)."""
    values = {}
    for trait in ATTRIBUTES:
        for base in cls.__mro__[1:]:
            own = base.__dict__.get("_declared_traits", {})
            if trait in own:
                values[trait] = own[trait]
                break
    return Traits(**values)


def declare(cls: type, inherited: Traits, declared: dict[str, Any]) -> Traits:
    """The traits of ``cls``: ``inherited`` changed by the class keywords ``declared``, checked.

    Raises
    ------
    TypeError
        For an unknown trait, a trait set in the class body instead of as a keyword, or a contradiction.
    """
    unknown = sorted(set(declared) - set(ATTRIBUTES))
    if unknown:
        raise TypeError(f"{cls.__name__}: unknown engine trait {unknown[0]!r}; the traits are {', '.join(ATTRIBUTES)}.")
    body = vars(cls)
    dynamic = isinstance(body.get("_block_invariant"), property)
    for trait, attribute in ATTRIBUTES.items():
        if attribute in body and not (trait == "block_invariant" and dynamic):
            raise TypeError(
                f"{cls.__name__} sets {attribute} in its body; declare the trait as a class keyword instead: "
                f"class {cls.__name__}(..., {trait}={body[attribute]!r})."
            )
    traits = dataclasses.replace(inherited, **declared)
    cls._declared_traits = dict(declared)  # type: ignore[attr-defined]
    dynamic = dynamic or any(isinstance(getattr(base, "_block_invariant", None), property) for base in cls.__mro__)
    problems = traits.problems(dynamic_block_invariance=dynamic)
    if problems:
        raise TypeError(f"{cls.__name__} declares contradictory engine traits: {'; '.join(problems)}.")
    return traits
