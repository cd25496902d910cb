#!/usr/bin/env python3
"""Writes the node test cases that ONNX's Python package generates
(onnx.backend.test.case.node.collect_testcases: one or more per operator and opset, up to
the newest opset the package knows) in the layout of ONNX's backend test data:

    OUT/node/<case>/model.onnx
    OUT/node/<case>/test_data_set_<k>/input_<j>.pb, output_<j>.pb

so that tests/onnx/conformance's runner reads them like Debian's 1.12 data
(`onnx_conformance --data OUT --suites node`). Run it with a Python that has the pinned
`onnx` (scripts/onnx_node_cases.sh makes one); tests/onnx/node_cases/README.md says more.
"""
import os
import shutil
import sys
import warnings

import onnx
from onnx import TensorProto, numpy_helper
import onnx.backend.test.case.node as node_cases


def serialized(value, value_info):
    """One input or output as the protobuf its type asks for."""
    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate.py OUT")
    out = os.path.join(sys.argv[1], "node")
    if os.path.exists(out):
        shutil.rmtree(out)
    warnings.simplefilter("ignore")  # numpy's overflow warnings while the cases compute
    cases = node_cases.collect_testcases(None)
    for case in cases:
        folder = os.path.join(out, case.name)
        os.makedirs(folder)
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for k, (inputs, outputs) in enumerate(case.data_sets):
            data = os.path.join(folder, f"test_data_set_{k}")
            os.makedirs(data)
            for j, value in enumerate(inputs):
                with open(os.path.join(data, f"input_{j}.pb"), "wb") as f:
                    f.write(serialized(value, graph.input[j]))
            for j, value in enumerate(outputs):
                with open(os.path.join(data, f"output_{j}.pb"), "wb") as f:
                    f.write(serialized(value, graph.output[j]))
    print(f"generate.py: {len(cases)} node cases of onnx {onnx.__version__} in {out}")


if __name__ == "__main__":
    main()
