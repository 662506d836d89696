"""An independent gRPC client of AnswerGateway.Ask, written against stubs that grpc_tools
generated from proto/. Prints one JSON line per event, then one line with the final status.

usage: ask_client.py <address> <api key or ""> <question> [max hops] [kb id ...]
"""
import json
import sys

import grpc
from google.protobuf.json_format import MessageToDict

from hopline.v1 import answer_gateway_pb2, answer_gateway_pb2_grpc


def main() -> int:
    address, api_key, question = sys.argv[1], sys.argv[2], sys.argv[3]
    max_hops = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    kb_ids = sys.argv[5:]
    metadata = [("authorization", f"Bearer {api_key}")] if api_key else []
    with grpc.insecure_channel(address) as channel:
        stub = answer_gateway_pb2_grpc.AnswerGatewayStub(channel)
        request = answer_gateway_pb2.AskRequest(question=question, max_hops=max_hops, kb_ids=kb_ids)
        try:
            for event in stub.Ask(request, metadata=metadata, timeout=30):
                print(json.dumps({"event": MessageToDict(event)}), flush=True)
            print(json.dumps({"status": "OK"}), flush=True)
        except grpc.RpcError as error:
            print(json.dumps({"status": error.code().name, "details": error.details()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
