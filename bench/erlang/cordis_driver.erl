%% The Erlang measuring side of scripts/compare-erlang.sh: distributed gen_server:call round trips to
%% cordis_echo on another node, one at a time (p50/p99) and with InFlight callers (calls per second).
%% Prints one JSON object on one line.
-module(cordis_driver).
-export([main/1]).

main([NodeText, IterationsText, InFlightText, SecondsText]) ->
    Node = list_to_atom(NodeText),
    Iterations = list_to_integer(IterationsText),
    InFlight = list_to_integer(InFlightText),
    Seconds = list_to_integer(SecondsText),
    true = net_kernel:connect_node(Node),
    Target = {cordis_echo, Node},
    %% About the size of a Cordis call of clock.now() on the wire.
    Payload = {call, 1, <<"clock">>, <<"blue">>, <<"now">>, #{<<"_0">> => <<"utc">>}},
    [gen_server:call(Target, Payload) || _ <- lists:seq(1, Iterations div 10)],
    Samples = lists:sort([time_call(Target, Payload) || _ <- lists:seq(1, Iterations)]),
    P50 = percentile(Samples, 0.50),
    P99 = percentile(Samples, 0.99),
    Rate = throughput(Target, Payload, InFlight, Seconds),
    io:format("{\"erlang_call_p50_us\":~.2f,\"erlang_call_p99_us\":~.2f,\"erlang_calls_per_s\":~.1f,"
              "\"erlang_otp\":\"~s\"}~n", [P50, P99, Rate, erlang:system_info(otp_release)]),
    halt(0).

time_call(Target, Payload) ->
    Start = erlang:monotonic_time(nanosecond),
    Payload = gen_server:call(Target, Payload),
    erlang:monotonic_time(nanosecond) - Start.

percentile(Sorted, Fraction) ->
    Index = min(length(Sorted), max(1, trunc(length(Sorted) * Fraction) + 1)),
    lists:nth(Index, Sorted) / 1000.

%% InFlight processes call in a loop for Seconds; the rate is all completed calls over the time.
throughput(Target, Payload, InFlight, Seconds) ->
    Parent = self(),
    Deadline = erlang:monotonic_time(millisecond) + Seconds * 1000,
    Start = erlang:monotonic_time(nanosecond),
    Workers = [spawn_link(fun() -> Parent ! {done, self(), caller(Target, Payload, Deadline, 0)} end)
               || _ <- lists:seq(1, InFlight)],
    Total = lists:sum([receive {done, Worker, Count} -> Count end || Worker <- Workers]),
    Elapsed = (erlang:monotonic_time(nanosecond) - Start) / 1.0e9,
    Total / Elapsed.

caller(Target, Payload, Deadline, Count) ->
    case Count rem 64 =:= 0 andalso erlang:monotonic_time(millisecond) >= Deadline of
        true -> Count;
        false ->
            Payload = gen_server:call(Target, Payload),
            caller(Target, Payload, Deadline, Count + 1)
    end.
