# Recurrent-layer cases ONNX's backend data lacks (bidirectional, reverse, layout 1, GRU with
# linear_before_reset 0 and 1, clip, activations, per-sequence lengths as a model input), in its layout: model.onnx and
# test_data_set_0/{input,output}_k.pb, the outputs computed by ONNX Runtime (by onnx.reference
# where ORT refuses layout 1). Run with the venv of models/ (onnx, onnxruntime):
#   python tests/onnx/extra/generate.py tests/onnx/extra
# tests/CMakeLists.txt runs them through onnx_conformance (suite rnn).
import sys
import numpy as np, onnx, onnxruntime as ort, os
from onnx import helper, TensorProto, numpy_helper
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(0)
def case(name, kind, direction, layout=0, lbr=None, T=3, N=2, I=3, H=4, with_init=True, clip=None, acts=None, lens=None):
    G = {"RNN":1,"GRU":3,"LSTM":4}[kind]; D = 2 if direction=="bidirectional" else 1
    X = rng.standard_normal((T,N,I) if layout==0 else (N,T,I)).astype(np.float32)
    W = rng.standard_normal((D,G*H,I)).astype(np.float32)*0.5
    R = rng.standard_normal((D,G*H,H)).astype(np.float32)*0.5
    B = rng.standard_normal((D,2*G*H)).astype(np.float32)*0.5
    h0 = rng.standard_normal((D,N,H) if layout==0 else (N,D,H)).astype(np.float32)
    inits=[numpy_helper.from_array(W,"W"),numpy_helper.from_array(R,"R"),numpy_helper.from_array(B,"B")]
    ins=["X","W","R","B",("seq_lens" if lens is not None else ""),("h0" if with_init else "")]
    feeds={"X":X}
    inputs=[helper.make_tensor_value_info("X",TensorProto.FLOAT,X.shape)]
    if lens is not None:  # per-sequence lengths as an input of the model
        feeds["seq_lens"]=np.array(lens,dtype=np.int32)
        inputs.append(helper.make_tensor_value_info("seq_lens",TensorProto.INT32,[N]))
    if with_init: inputs.append(helper.make_tensor_value_info("h0",TensorProto.FLOAT,h0.shape)); feeds["h0"]=h0
    if kind=="LSTM":
        c0 = rng.standard_normal(h0.shape).astype(np.float32)
        P = rng.standard_normal((D,3*H)).astype(np.float32)*0.3
        inits.append(numpy_helper.from_array(P,"P"))
        ins += [("c0" if with_init else ""), "P"]
        if with_init: inputs.append(helper.make_tensor_value_info("c0",TensorProto.FLOAT,c0.shape)); feeds["c0"]=c0
    outs=["Y","Y_h"]+(["Y_c"] if kind=="LSTM" else [])
    attrs=dict(hidden_size=H, direction=direction)
    if layout: attrs["layout"]=1
    if lbr is not None: attrs["linear_before_reset"]=lbr
    if clip is not None: attrs["clip"]=clip
    if acts: attrs["activations"]=acts
    node=helper.make_node(kind, ins, outs, **attrs)
    g=helper.make_graph([node],name,inputs,[helper.make_tensor_value_info(o,TensorProto.FLOAT,None) for o in outs],initializer=inits)
    m=helper.make_model(g,opset_imports=[helper.make_opsetid("",14)]); m.ir_version=8
    d=os.path.join(OUT,"rnn","test_"+name); os.makedirs(os.path.join(d,"test_data_set_0"),exist_ok=True)
    onnx.save(m,os.path.join(d,"model.onnx"))
    from onnx.reference import ReferenceEvaluator
    res=(ReferenceEvaluator(m).run(None,feeds) if layout else ort.InferenceSession(m.SerializeToString(),providers=["CPUExecutionProvider"]).run(None,feeds))
    for k,(n,v) in enumerate(feeds.items()):
        open(os.path.join(d,"test_data_set_0",f"input_{k}.pb"),"wb").write(numpy_helper.from_array(v,n).SerializeToString())
    for k,(n,v) in enumerate(zip(outs,res)):
        open(os.path.join(d,"test_data_set_0",f"output_{k}.pb"),"wb").write(numpy_helper.from_array(v,n).SerializeToString())
case("lstm_bidir","LSTM","bidirectional")
case("lstm_reverse_layout1","LSTM","reverse",layout=1)
case("lstm_clip","LSTM","forward",clip=0.7)
case("gru_bidir_lbr1","GRU","bidirectional",lbr=1)
case("gru_bidir_lbr0","GRU","bidirectional",lbr=0)
case("gru_reverse_layout1","GRU","reverse",layout=1,lbr=1)
case("rnn_bidir","RNN","bidirectional")
case("rnn_relu","RNN","forward",acts=["Relu"])
case("gru_noinit","GRU","forward",with_init=False)
case("lstm_bidir_lens","LSTM","bidirectional",T=5,N=3,lens=[5,2,3])
case("gru_reverse_lens","GRU","reverse",T=4,N=3,lbr=1,lens=[1,4,3])
