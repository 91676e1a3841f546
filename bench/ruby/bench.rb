# frozen_string_literal: true

# make bench's Ruby part: on each server, the server's CPU per decision of rack-attack's own Redis
# store (INCRBY then EXPIRE in a pipeline) against GoblinRedis::RackAttackStore (one GOBLIN.INCREX),
# both driven through rack-attack's Rack::Attack::Cache#count as a throttle drives it; and per lock
# (acquire and release, uncontended) of the usual single-server lock (SET NX PX, released by a
# compare-and-delete script, as redlock-rb does it) against GoblinRedis::Lock (GOBLIN.LOCK ... FENCE,
# GOBLIN.CAD). The CPU is read two ways: the usec that INFO commandstats gives the commands the
# decisions ran, and the server process's used_cpu_user + used_cpu_sys (network included).
#
#   ruby bench/ruby/bench.rb --module target/release/libgoblin.so --server "Valkey 9.1=path" ... --out FILE
require "optparse"
require "socket"
require "securerandom"
require "redis"
require "rack/attack"
require "rack/attack/version"
require "goblin_redis"

options = { servers: [], out: nil, decisions: 10_000, locks: 3_000, rounds: 3 }
OptionParser.new do |parser|
  parser.on("--module PATH") { |path| options[:module] = path }
  parser.on("--server LABEL_PATH") { |pair| options[:servers] << pair.split("=", 2) }
  parser.on("--out FILE") { |file| options[:out] = file }
  parser.on("--quick") { options.merge!(decisions: 200, locks: 100, rounds: 1) }
end.parse!

# A server of its own on a free loopback port, stopped by its pid.
class BenchServer
  attr_reader :port, :idle_per_second

  def initialize(binary, module_path)
    @port = TCPServer.open("127.0.0.1", 0) { |socket| socket.addr[1] }
    @pid = spawn(binary, "--port", @port.to_s, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--loadmodule", module_path, out: File::NULL, err: File::NULL)
    @client = Redis.new(port: @port)
    50.times do
      return if (@client.ping rescue nil) == "PONG" # rubocop:disable Style/RescueModifier

      sleep 0.1
    end
    raise "#{binary} did not start"
  end

  # The server's own CPU while idle (its cron), per second, measured over `seconds`: taken off
  # every measurement, so that a slower client is not charged the server's idle time.
  def measure_idle(seconds = 2.0)
    before = cpu([])[1]
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    sleep seconds
    @idle_per_second = (cpu([])[1] - before) / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
  end

  def client
    Redis.new(port: @port)
  end

  # [commandstats usec of `commands`, used_cpu_user + used_cpu_sys in usec]
  def cpu(commands)
    stats = @client.info("commandstats")
    usec = commands.sum { |command| Integer(stats.dig(command, "usec") || 0) }
    info = @client.info("cpu")
    [usec, ((Float(info["used_cpu_user"]) + Float(info["used_cpu_sys"])) * 1_000_000).round]
  end

  def stop
    @client.close
    Process.kill("TERM", @pid)
    Process.wait(@pid)
  end
end

# What `work` costs the server, per operation: [commandstats usec, process usec, operations/s].
def measure(server, commands, count, &)
  server.client.config(:resetstat)
  before = server.cpu(commands)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  count.times(&)
  elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  after = server.cpu(commands)
  busy = after[1] - before[1] - (server.idle_per_second * elapsed)
  [(after[0] - before[0]).fdiv(count), busy.fdiv(count), count / elapsed]
end

def count_with(store, server, commands, count)
  cache = Rack::Attack::Cache.new
  cache.store = store
  measure(server, commands, count) { |i| cache.count("bench:ip-#{i % 100}", 60) }
end

RELEASE = <<~LUA
  if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end
  return 0
LUA

def stock_locks(redis, server, count)
  measure(server, %w[set eval evalsha], count) do |i|
    token = SecureRandom.uuid
    redis.set("lock:#{i % 100}", token, nx: true, px: 30_000) or raise "not granted"
    redis.eval(RELEASE, keys: ["lock:#{i % 100}"], argv: [token]) == 1 or raise "not released"
  end
end

def goblin_locks(redis, server, count)
  measure(server, %w[goblin.lock goblin.cad], count) do |i|
    GoblinRedis::Lock.new(redis, "lock:#{i % 100}", ttl: 30).lock.unlock
  end
end

# The sum of `rounds` alternating measurements (the mean of each figure).
def rounds(count, &)
  runs = Array.new(count, &)
  runs.transpose.map { |figures| figures.sum / figures.size }
end

rows = options[:servers].map do |label, binary|
  server = BenchServer.new(binary, options[:module])
  server.measure_idle
  stock_client = server.client
  goblin = GoblinRedis::RackAttackStore.new(server.client)
  lock_client = server.client
  decisions = [
    rounds(options[:rounds]) { count_with(stock_client, server, %w[incrby expire], options[:decisions]) },
    rounds(options[:rounds]) { count_with(goblin, server, %w[goblin.increx], options[:decisions]) }
  ]
  locks = [
    rounds(options[:rounds]) { stock_locks(lock_client, server, options[:locks]) },
    rounds(options[:rounds]) { goblin_locks(lock_client, server, options[:locks]) }
  ]
  server.stop
  warn "bench/ruby: #{label} done"
  [label, decisions, locks]
end

def ratio(goblin, stock)
  format("%.2fx", goblin / stock)
end

def geomean(values)
  values.map { |value| Math.log(value) }.sum.fdiv(values.size).then { |log| Math.exp(log) }
end

lines = []
lines << "# Ruby: goblin-redis against the stock stores"
lines << ""
lines << "Written by `make bench` (bench/ruby/bench.rb): #{options[:decisions]} rack-attack counts and " \
         "#{options[:locks]} locks per store, per server, the mean of #{options[:rounds]} alternating rounds, " \
         "from one Ruby #{RUBY_VERSION} process (redis-rb #{Redis::VERSION}, rack-attack " \
         "#{Rack::Attack::VERSION}) on loopback. Server CPU in microseconds per operation: by INFO commandstats " \
         "(the usec of the commands the operations ran) and by the server process's used_cpu_user + " \
         "used_cpu_sys (network included), less what the idle server used over the same time."
lines << ""
lines << "## rack-attack: a count (Rack::Attack::Cache#count, as a throttle calls it)"
lines << ""
lines << "Stock: rack-attack 6.6's Redis store (INCRBY and EXPIRE in a pipeline). Goblin: " \
         "GoblinRedis::RackAttackStore (GOBLIN.INCREX)."
lines << ""
lines << "| server | commandstats usec, stock | Goblin | ratio | process usec, stock | Goblin | ratio " \
         "| counts/s, stock | Goblin |"
lines << "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
rows.each do |label, (stock, goblin), _|
  lines << "| #{label} | #{format("%.2f",
                                  stock[0])} | #{format("%.2f", goblin[0])} | #{ratio(goblin[0], stock[0])} | " \
           "#{format("%.2f", stock[1])} | #{format("%.2f", goblin[1])} | #{ratio(goblin[1], stock[1])} | " \
           "#{stock[2].round} | #{goblin[2].round} |"
end
lines << ""
lines << "## A lock: acquire and release, uncontended"
lines << ""
lines << "Stock: SET NX PX, released by a compare-and-delete script (EVAL), as redlock-rb does on one " \
         "server. Goblin: GoblinRedis::Lock (GOBLIN.LOCK ... FENCE, every grant fenced; GOBLIN.CAD)."
lines << ""
lines << "| server | commandstats usec, stock | Goblin | ratio | process usec, stock | Goblin | ratio " \
         "| locks/s, stock | Goblin |"
lines << "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
rows.each do |label, _, (stock, goblin)|
  lines << "| #{label} | #{format("%.2f",
                                  stock[0])} | #{format("%.2f", goblin[0])} | #{ratio(goblin[0], stock[0])} | " \
           "#{format("%.2f", stock[1])} | #{format("%.2f", goblin[1])} | #{ratio(goblin[1], stock[1])} | " \
           "#{stock[2].round} | #{goblin[2].round} |"
end
lines << ""
%i[decisions locks].each_with_index do |what, index|
  pairs = rows.map { |row| row[index + 1] }
  lines << "Geometric mean over the servers, #{what}: commandstats " \
           "#{format("%.2fx", geomean(pairs.map { |stock, goblin| goblin[0] / stock[0] }))}, process " \
           "#{format("%.2fx", geomean(pairs.map { |stock, goblin| goblin[1] / stock[1] }))}, throughput " \
           "#{format("%.2fx", geomean(pairs.map { |stock, goblin| goblin[2] / stock[2] }))}."
end
File.write(options.fetch(:out), "#{lines.join("\n")}\n")
puts "bench/ruby: #{options[:out]}"
