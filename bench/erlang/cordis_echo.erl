%% A gen_server that answers every call with the term it was sent: the Erlang side of
%% scripts/compare-erlang.sh. Started on the serving node with cordis_echo:start().
-module(cordis_echo).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2]).

start() ->
    {ok, _} = gen_server:start({local, cordis_echo}, ?MODULE, [], []),
    io:format("echo ready~n"),
    receive stop -> ok end.

init([]) -> {ok, nostate}.

handle_call(Request, _From, State) -> {reply, Request, State}.

handle_cast(_Message, State) -> {noreply, State}.
