# frozen_string_literal: true

# A Rack app with Goblin beneath it, on one redis-rb client:
#   - rack-attack on GoblinRedis::RackAttackStore: at most 3 logins a minute per IP, and a scanner
#     banned for 5 minutes at its first probe of /wp-*;
#   - GET /api under a GCRA limiter (5 at once, then 1 every 2 s), with the RateLimit headers;
#   - GET /report under a lock, its body written with the grant's fencing token.
#
#   REDIS_URL=redis://127.0.0.1:6379 ruby examples/ruby/app.rb    (PORT=9292; or rackup config.ru)
require "goblin_redis"
require "rack"
require "rack/attack"

REDIS = Redis.new(url: ENV.fetch("REDIS_URL", "redis://127.0.0.1:6379"))

Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(REDIS)
Rack::Attack.throttle("logins/ip", limit: 3, period: 60) do |request|
  request.ip if request.post? && request.path == "/login"
end
Rack::Attack.blocklist("scanners") do |request|
  Rack::Attack::Fail2Ban.filter("scanners:#{request.ip}", maxretry: 0, findtime: 60, bantime: 300) do
    request.path.start_with?("/wp-")
  end
end

API = GoblinRedis::Limiter::GCRA.new(REDIS, burst: 4, rate: 1, period: 2)
TEXT = { "Content-Type" => "text/plain" }.freeze

App = Rack::Builder.new do
  use Rack::Attack

  map "/login" do
    run ->(_env) { [200, TEXT, ["welcome\n"]] }
  end

  map "/api" do
    run lambda { |env|
      decision = API.call("api:#{Rack::Request.new(env).ip}")
      [decision.allowed? ? 200 : 429, TEXT.merge(decision.headers), ["#{decision.remaining} left\n"]]
    }
  end

  map "/report" do
    run lambda { |_env|
      lock = GoblinRedis::Lock.new(REDIS, "lock:report", ttl: 10)
      lock.synchronize(timeout: 5) do
        [200, TEXT, ["report written under fencing token #{lock.fencing_token}\n"]]
      end
    }
  end

  run ->(_env) { [404, TEXT, ["not found\n"]] }
end.to_app

if $PROGRAM_NAME == __FILE__
  require "webrick"
  Rack::Handler::WEBrick.run(App, Host: "127.0.0.1", Port: Integer(ENV.fetch("PORT", "9292")),
                                  AccessLog: [], Logger: WEBrick::Log.new(nil, WEBrick::Log::WARN)) do |server|
    %w[INT TERM].each { |signal| trap(signal) { server.shutdown } }
    $stdout.puts "listening on http://127.0.0.1:#{server.config[:Port]}"
    $stdout.flush
  end
end
