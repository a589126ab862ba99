"""gymnasium-robotics 1.4.2 under mujoco 4: the one repair its joint helpers need, applied when (and only when) needed.

gymnasium-robotics' ``utils/mujoco_utils.py`` reads and writes joints through four helpers (``get_joint_qpos``,
``get_joint_qvel``, ``set_joint_qpos``, ``set_joint_qvel``). Each ends in
``assert joint_type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)`` where ``joint_type`` is a numpy
integer from ``model.jnt_type``. Under mujoco 4.0 a ``mjtJoint`` member no longer compares equal to a numpy integer
when it is on the left (``mjtJoint.mjJNT_HINGE == numpy.int32(3)`` is ``False``; the other way round is ``True``),
and ``in`` compares with the member on the left, so the assertion fails for every hinge and slide joint: Fetch,
Shadow Hand and FrankaKitchen cannot even be built. Nothing else in those environments depends on it (under
``python -O``, which drops the assertions, all of them build and step unchanged).

:func:`repair_joint_helpers` replaces the four helpers by copies that compare the joint type as a plain ``int``
and otherwise do exactly what upstream's do (the same widths, including upstream's 4 for a ball joint's velocity,
and the same slices). It checks first whether the repair is needed, so it is a no-op on mujoco 3. The module
imports neither mujoco nor gymnasium-robotics at import time.
"""

from __future__ import annotations

from typing import Any

__all__ = ["joint_helpers_broken", "repair_joint_helpers"]

_QPOS_WIDTH = {0: 7, 1: 4, 2: 1, 3: 1}
"""qpos entries per joint type (mjJNT_FREE 0, mjJNT_BALL 1, mjJNT_SLIDE 2, mjJNT_HINGE 3), as upstream's helpers."""
_QVEL_WIDTH = {0: 6, 1: 4, 2: 1, 3: 1}
"""qvel entries per joint type, as upstream's helpers (4 for a ball joint: upstream's own choice, kept)."""


def joint_helpers_broken() -> bool:
    """Whether upstream's joint-type check fails on this mujoco (it does on mujoco 4.0)."""
    import mujoco
    import numpy as np

    hinge = mujoco.mjtJoint.mjJNT_HINGE
    return np.int32(int(hinge)) not in (hinge, mujoco.mjtJoint.mjJNT_SLIDE)


def _joint(model: Any, name: str, widths: dict[int, int], addresses: Any) -> tuple[int, int]:
    import mujoco

    joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if joint_id == -1:
        raise ValueError(f"Joint with name '{name}' is not part of the model!")
    kind = int(model.jnt_type[joint_id])
    if kind not in widths:
        raise ValueError(f"joint {name!r} has type {kind}, which is none of free, ball, slide or hinge")
    start = int(addresses[joint_id])
    return start, start + widths[kind]


def _get_joint_qpos(model: Any, data: Any, name: str) -> Any:
    start, end = _joint(model, name, _QPOS_WIDTH, model.jnt_qposadr)
    return data.qpos[start:end].copy()


def _get_joint_qvel(model: Any, data: Any, name: str) -> Any:
    start, end = _joint(model, name, _QVEL_WIDTH, model.jnt_dofadr)
    return data.qvel[start:end].copy()


def _set(target: Any, start: int, end: int, name: str, value: Any) -> None:
    import numpy as np

    array = np.array(value)
    if end - start > 1 and array.shape != (end - start,):
        raise ValueError(f"Value has incorrect shape {name}: {value}")
    target[start:end] = array


def _set_joint_qpos(model: Any, data: Any, name: str, value: Any) -> None:
    start, end = _joint(model, name, _QPOS_WIDTH, model.jnt_qposadr)
    _set(data.qpos, start, end, name, value)


def _set_joint_qvel(model: Any, data: Any, name: str, value: Any) -> None:
    start, end = _joint(model, name, _QVEL_WIDTH, model.jnt_dofadr)
    _set(data.qvel, start, end, name, value)


def repair_joint_helpers() -> bool:
    """Replace upstream's four joint helpers when :func:`joint_helpers_broken`; return whether they were replaced.

    Every caller in gymnasium-robotics reaches them through the module (``self._utils.set_joint_qpos``,
    ``robot_get_obs`` calling ``get_joint_qpos``), so replacing the module's attributes reaches every caller.
    """
    if not joint_helpers_broken():
        return False
    from gymnasium_robotics.utils import mujoco_utils

    mujoco_utils.get_joint_qpos = _get_joint_qpos
    mujoco_utils.get_joint_qvel = _get_joint_qvel
    mujoco_utils.set_joint_qpos = _set_joint_qpos
    mujoco_utils.set_joint_qvel = _set_joint_qvel
    return True
