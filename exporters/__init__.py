"""Datasets built from Runs: HuggingFace-style rollout datasets (Parquet + card) and Minari datasets.

Every export is a projection of the Runs' logs (``ledger`` + ``projections`` only). Importing this
package needs no optional dependency; :func:`export_dataset` asks for pyarrow (``evoledger[export]``)
or minari (``evoledger[minari]``) when it runs.
"""

from evoledger.exporters.dataset import export_dataset
from evoledger.exporters.options import (
    CONFIG_NAMES,
    OUTPUT_FORMATS,
    REWARD_SOURCES,
    VISIBILITIES,
    ExportOptions,
    check_configs,
)
from evoledger.exporters.output_dir import EXPORT_FORMAT
from evoledger.exporters.report import ConfigReport, ExportReport, RunReport, SplitReport
from evoledger.exporters.runs import RunFacts, open_run, public_spec_from_task_text, read_run_facts

__all__ = [
    "CONFIG_NAMES",
    "EXPORT_FORMAT",
    "OUTPUT_FORMATS",
    "REWARD_SOURCES",
    "VISIBILITIES",
    "ConfigReport",
    "ExportOptions",
    "ExportReport",
    "RunFacts",
    "RunReport",
    "SplitReport",
    "check_configs",
    "export_dataset",
    "open_run",
    "public_spec_from_task_text",
    "read_run_facts",
]
